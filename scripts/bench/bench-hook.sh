#!/usr/bin/env bash
# Wall time of the whole `engine hook` process, stdin to exit, on the SciFact + CoSQA dev index
# (>= 10k chunks; built by scripts/bench/bench-search.sh, which this runs first if it is missing):
# with the daemon warm, cold without it, and `engine --version` in the same run (the process
# start is the floor). Prints p50 / p95 per case.
# --concurrency 1,4,8,16: instead of the cold case, prompts arriving together: at each level that
# many clients each send prompts back to back to the one warm daemon; p50 / p95 per level and its
# p50 over the single client's, all in the same run.
#   scripts/bench/bench-hook.sh [--concurrency LIST] [INDEX_DIR]   (ENGINE_BENCH_QUERIES=a.jsonl:b.jsonl: other prompts)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
data="${ENGINE_DATASETS:-../shared/datasets}"
levels=""
if [ "${1:-}" = "--concurrency" ]; then
    levels="$2"
    shift 2
fi
index="${1:-${TMPDIR:-/tmp}/engine-bench-both}"
if [ ! -f "$index/CURRENT" ]; then
    scripts/bench/bench-search.sh "$index"
fi
cargo build --release --quiet
exe="$(pwd)/${CARGO_TARGET_DIR:-target}/release/engine"
exec python3 - "$exe" "$index" "$data" "$levels" <<'PY'
import json, os, subprocess, sys, tempfile, time

exe, index, data, levels = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3], sys.argv[4]
queries = []
if os.environ.get("ENGINE_BENCH_QUERIES"):
    # Prompts that fit another index (scripts/bench/bench-large.sh): queries.jsonl files, colon separated.
    for path in os.environ["ENGINE_BENCH_QUERIES"].split(":"):
        with open(path) as f:
            queries += [json.loads(l)["text"] for l in f]
    queries = queries[:120]
else:
    for name in ("scifact", "cosqa-dev"):
        with open(f"{data}/{name}/queries.jsonl") as f:
            queries += [json.loads(l)["text"] for l in f][:60]

project = tempfile.mkdtemp(prefix="engine-hook-bench-")
os.symlink(index, os.path.join(project, ".engine"))

def payload(q):
    return json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": q, "cwd": project,
                       "session_id": "bench", "transcript_path": "/dev/null"}).encode()

def wall(args, stdin=b""):
    t = time.perf_counter()
    subprocess.run(args, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1e3

def pct(v, q):
    v = sorted(v)
    return v[max(0, min(len(v) - 1, int(-(-q * len(v) // 1)) - 1))]

def show(name, v):
    print(f"{name:<34} n={len(v):<4} p50 {pct(v, .5):8.1f} ms   p95 {pct(v, .95):8.1f} ms")
    return pct(v, .5)

def config(text):
    # ENGINE_BENCH_CONFIG: more settings for every case (e.g. "[search]\ntop_n = 50\n").
    with open(os.path.join(project, "engine.toml"), "w") as f:
        f.write(text + os.environ.get("ENGINE_BENCH_CONFIG", "").replace("\\n", "\n"))

subprocess.run([exe, "status", "--index", index])
# Warm daemon: start it, let it load, then time hook processes that ask it.
config("[hook]\nidle_timeout_s = 120\n")
daemon = subprocess.Popen([exe, "serve", "--index", index], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
sock = os.path.join(index, "engine.sock")
for _ in range(200):
    if os.path.exists(sock):
        break
    time.sleep(0.05)
for q in queries[:5]:
    wall([exe, "hook"], payload(q))  # warm the page cache and the daemon
version, warm = [], []
for q in queries:
    version.append(wall([exe, "--version"]))
    warm.append(wall([exe, "hook"], payload(q)))
print()
v = show("engine --version", version)
w = show("engine hook, daemon warm", warm)
if levels:
    import threading
    base = None
    for c in [int(x) for x in levels.split(",")]:
        rounds = max(6, 48 // c)
        times, lock = [], threading.Lock()
        def client(k):
            for r in range(rounds):
                t = wall([exe, "hook"], payload(queries[(k * rounds + r) % len(queries)]))
                with lock:
                    times.append(t)
        threads = [threading.Thread(target=client, args=(k,)) for k in range(c)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        p50 = show(f"{c:>2} clients at once, daemon warm", times)
        base = base or p50
        print(f"{'':<34} p50 / one client's: {p50 / base:.2f}x")
else:
    # Cold: no daemon, the process loads the index and the model itself.
    config("[hook]\ndaemon = false\n")
    cold = [wall([exe, "hook"], payload(q)) for q in queries[:20]]
    show("engine hook, no daemon (cold)", cold)
print(f"daemon-warm hook / --version (p50): {w / v:.1f}x")
daemon.terminate()  # the daemon this run started (a replacement it started exits when idle)
PY
