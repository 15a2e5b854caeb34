#!/usr/bin/env bash
# Wall time of one `engine search` in a terminal, the whole process, on the SciFact + CoSQA dev
# index (>= 10k chunks; built by scripts/bench/bench-search.sh if missing): in its own process
# (`--no-daemon`: it loads the model) and answered by a warm daemon, with `engine --version` in
# the same run (the process start is the floor). Prints p50 / p95 and peak memory per case.
#   scripts/bench/bench-cli.sh [INDEX_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
data="${ENGINE_DATASETS:-../shared/datasets}"
index="${1:-${TMPDIR:-/tmp}/engine-bench-both}"
if [ ! -f "$index/CURRENT" ]; then
    scripts/bench/bench-search.sh "$index"
fi
cargo build --release --quiet
exe="$(pwd)/${CARGO_TARGET_DIR:-target}/release/engine"
exec python3 - "$exe" "$index" "$data" <<'PY'
import json, os, resource, subprocess, sys, time

exe, index, data = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
queries = []
for name in ("scifact", "cosqa-dev"):
    with open(f"{data}/{name}/queries.jsonl") as f:
        queries += [json.loads(l)["text"] for l in f][:30]

def wall(args):
    t = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1e3

def pct(v, q):
    v = sorted(v)
    return v[max(0, min(len(v) - 1, int(-(-q * len(v) // 1)) - 1))]

def show(name, v, rss=None):
    mem = f"   max RSS {rss / 1024:6.0f} MB" if rss else ""
    print(f"{name:<40} n={len(v):<4} p50 {pct(v, .5):8.1f} ms   p95 {pct(v, .95):8.1f} ms{mem}")
    return pct(v, .5)

def peak_rss(args):
    # ru_maxrss of the children so far is a maximum: run the case alone in a child of its own.
    code = f"import resource,subprocess; subprocess.run({args!r}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)

search = lambda q, *more: [exe, "search", "--index", index, "-k", "10", *more, q]
cold = [wall(search(q, "--no-daemon")) for q in queries[:15]]
cold_rss = peak_rss(search(queries[0], "--no-daemon"))
daemon = subprocess.Popen([exe, "serve", "--index", index], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(600):
    out = subprocess.run([exe, "status", "--json", "--index", index], capture_output=True, text=True).stdout
    if json.loads(out).get("daemon"):
        break
    time.sleep(0.1)
for q in queries[:5]:
    wall(search(q))  # the daemon opens the index as the search asks, once
version, warm = [], []
for q in queries:
    version.append(wall([exe, "--version"]))
    warm.append(wall(search(q)))
warm_rss = peak_rss(search(queries[0]))
print()
v = show("engine --version", version)
show("engine search, in process (--no-daemon)", cold, cold_rss)
w = show("engine search, daemon warm", warm, warm_rss)
print(f"daemon-warm search / --version (p50): {w / v:.1f}x")
daemon.terminate()
PY
