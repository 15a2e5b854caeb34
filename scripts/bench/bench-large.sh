#!/usr/bin/env bash
# Large-corpus benchmark: the Rust and Markdown sources of the crates this project builds with
# (Cargo.lock's registry packages, as cargo unpacked them under ~/.cargo/registry/src, generated
# FFI bindings left out), in lock-file order until ENGINE_LARGE_BYTES (default 21 MB: ~55k chunks).
#
# The first run indexes from nothing and keeps the index (embedding is the long part: about half
# an hour here); later runs reuse it and measure the rest warm. ENGINE_LARGE_FRESH=1 starts over.
# Prints: time until BM25-searchable and until fully embedded, indexing vs raw-embedder chunks/s,
# peak RSS, size on disk per 1k chunks, no-change and one-file-edit reindex times, HNSW recall@10,
# in-process search p50/p95 (cargo bench --bench search) and hook p50/p95 with the daemon warm.
#   scripts/bench/bench-large.sh [WORK_DIR]        (default ${TMPDIR:-/tmp}/engine-large)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work="$(realpath -m "${1:-${TMPDIR:-/tmp}/engine-large}")"
budget="${ENGINE_LARGE_BYTES:-21000000}"
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
scripts/fetch-models.sh >/dev/null
cargo build --release --quiet
exe="$(pwd)/${CARGO_TARGET_DIR:-target}/release/engine"
corpus="$work/corpus"
index="$work/index"
mkdir -p "$work"
if [ "${ENGINE_LARGE_FRESH:-0}" = 1 ]; then
    rm -rf "$corpus" "$index" "$work/first.json" "$work/first.time"
fi

# 1. The corpus, and prompts for it: doc-comment sentences (what a function does, in words).
if [ ! -d "$corpus" ]; then
    python3 - Cargo.lock "$registry" "$corpus" "$budget" <<'PY'
import os, re, shutil, sys
lock, registry, dest, budget = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
packages = re.findall(r'name = "([^"]+)"\nversion = "([^"]+)"\nsource = "registry', open(lock).read())
roots = [os.path.join(registry, d) for d in sorted(os.listdir(registry))]
generated = re.compile(r"^(windows|winapi|web-sys|js-sys|linux-raw-sys|wasm)|-sys$")
total = crates = 0
for name, version in packages:
    if generated.search(name):
        continue
    src = next((os.path.join(r, f"{name}-{version}") for r in roots if os.path.isdir(os.path.join(r, f"{name}-{version}"))), None)
    if src is None:
        continue
    for d, _, files in sorted(os.walk(src)):
        for f in sorted(files):
            if f.endswith((".rs", ".md")):
                path = os.path.join(d, f)
                out = os.path.join(dest, os.path.relpath(path, os.path.dirname(src)))
                os.makedirs(os.path.dirname(out), exist_ok=True)
                shutil.copyfile(path, out)
                total += os.path.getsize(path)
    crates += 1
    if total >= budget:
        break
print(f"corpus: {crates} crates, {total / 1e6:.1f} MB of .rs and .md, up to {name}-{version}")
PY
fi
python3 - "$corpus" "$work/queries.jsonl" <<'PY'
import json, os, re, sys
corpus, out = sys.argv[1], sys.argv[2]
lines = []
for d, _, files in sorted(os.walk(corpus)):
    for f in sorted(files):
        if f.endswith(".rs"):
            for line in open(os.path.join(d, f), errors="replace"):
                m = re.match(r"\s*///\s*([A-Z][a-z][^`\[\]()#<>{}]{30,120}\.)\s*$", line)
                if m:
                    lines.append(m.group(1))
step = max(1, len(lines) // 300)
with open(out, "w") as f:
    for i, text in enumerate(lines[::step][:300]):
        f.write(json.dumps({"_id": str(i), "text": text}) + "\n")
print(f"queries: {min(300, len(lines[::step]))} doc-comment sentences")
PY

# 2. The first index, from nothing (kept for later runs).
if [ ! -f "$work/first.json" ]; then
    /usr/bin/time -v -o "$work/first.time" "$exe" index "$corpus" --index "$index" --json >"$work/first.json.tmp"
    mv "$work/first.json.tmp" "$work/first.json"
fi

# 3. The raw embedder on every 10th chunk of the same index, as indexing embeds them.
if [ ! -f "$work/raw.txt" ]; then
    "$exe" export --index "$index" | python3 -c '
import json, sys
for i, line in enumerate(sys.stdin):
    if i % 10 == 0:
        c = json.loads(line)
        print(json.dumps({"title": c["title"], "text": c["text"]}))' >"$work/sample.jsonl"
    ENGINE_BENCH_TEXTS="$work/sample.jsonl" cargo bench --quiet --bench embed 2>/dev/null | tee "$work/raw.txt"
fi

# 4. Reindexing: nothing changed, then one file edited (a doc comment added) and put back.
python3 - "$exe" "$corpus" "$index" "$work" <<'PY'
import json, os, re, statistics, subprocess, sys, time
exe, corpus, index, work = sys.argv[1:5]
first = json.load(open(f"{work}/first.json"))
peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(f"{work}/first.time").read()).group(1))
raw = float(re.search(r"= ([\d.]+) chunks/s", open(f"{work}/raw.txt").read()).group(1))
s = first["seconds"]

def run():
    t = time.perf_counter()
    out = subprocess.run([exe, "index", corpus, "--index", index, "--json"], check=True, capture_output=True).stdout
    return time.perf_counter() - t, json.loads(out)

nochange = statistics.median(run()[0] for _ in range(3))
# A mid-sized file in the middle of the corpus: the same one on every run.
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(corpus) for f in fs if f.endswith(".rs"))
target = next(p for p in files[len(files) // 2:] if 8_000 <= os.path.getsize(p) <= 20_000)
original = open(target, "rb").read()
try:
    with open(target, "ab") as f:
        # A new text every run, so the edited chunk is never in the embedding cache.
        f.write(f"\n/// Marks where the large-corpus benchmark edited this file ({time.time_ns()}).\npub fn engine_bench_marker() {{}}\n".encode())
    edit, report = run()
finally:
    open(target, "wb").write(original)
back, back_report = run()
status = json.loads(subprocess.run([exe, "status", "--index", index, "--json"], check=True, capture_output=True).stdout)
chunks = status["chunks"]
def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
live = os.path.join(index, open(os.path.join(index, "CURRENT")).read().strip())
generation = du(live)
cache = du(os.path.join(index, "cache"))
rate = first["chunks_embedded"] / s["embed"] if s["embed"] else 0
rows = [
    ("corpus", f"{status['documents']:,} files, {chunks:,} chunks"),
    ("time until BM25-searchable (first index)", f"{s['searchable']:.1f} s"),
    ("time until fully embedded (first index)", f"{s['total']:.0f} s ({first['chunks_embedded']:,} chunks embedded)"),
    ("indexing throughput vs the raw embedder", f"{rate:.1f} vs {raw:.1f} chunks/s ({100 * rate / raw:.0f}%)"),
    ("peak RSS, first index (/usr/bin/time -v)", f"{peak / 1024:.0f} MiB"),
    ("index on disk per 1k chunks", f"{generation / chunks * 1000 / 1e6:.2f} MB (+ {cache / chunks * 1000 / 1e6:.2f} MB embedding cache)"),
    ("no-change reindex (median of 3, whole process)", f"{nochange:.2f} s"),
    (f"one-file edit reindex ({os.path.relpath(target, corpus)})",
     f"{edit:.2f} s, of which embedding {report['seconds']['embed']:.2f} s ({report['chunks_embedded']} chunks); put back: {back:.2f} s"),
]
print()
print("| measured | value |\n|---|---|")
for k, v in rows:
    print(f"| {k} | {v} |")
print()
print("first index, seconds per stage:", {k: round(v, 1) for k, v in s.items()})
print("one-file edit, seconds per stage:", {k: round(v, 2) for k, v in report["seconds"].items()})
PY

# 5. HNSW recall and in-process search latency on this index, then the hook with the daemon warm.
export ENGINE_BENCH_INDEX="$index" ENGINE_BENCH_QUERIES="$work/queries.jsonl"
cargo bench --quiet --bench vector 2>/dev/null | grep -E "vectors of|stored graph|HNSW build"
cargo bench --quiet --bench search -- --warm-up-time 1 --measurement-time 3 2>/dev/null | grep -vE "^(Benchmarking|Found|  [0-9]+ \(|Warning)" | head -30
scripts/bench/bench-hook.sh "$index" | tail -4
