#!/usr/bin/env bash
# The Milvus backend side by side with the local index, against a Milvus Lite server this script
# starts on a free loopback port and stops by PID at exit:
#   1. quality: local hybrid vs Milvus-run legs (nDCG@10, MRR@10) on SciFact test and the
#      golden sets (code, and the real-project sets click, ripgrep, pino), each pushed to its own
#      collection from the index `engine eval` searches;
#   2. scale: push throughput and hybrid query p50/p95 at >= 100k chunks (benches/milvus.rs),
#      on SciFact + CoSQA documents repeated with a copy number until there are enough, with
#      hash-embedder vectors (no model: the figures are about moving and searching rows).
#   scripts/bench/bench-milvus.sh [quality|scale|all] [CHUNKS]
# Needs the datasets in $ENGINE_DATASETS (default ../shared/datasets) and the real-project corpora
# (scripts/fetch-corpora.sh). The machine is shared: timings move with its load.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
what="${1:-all}"
chunks="${2:-100000}"
data="${ENGINE_DATASETS:-../shared/datasets}"
work="${TMPDIR:-/tmp}/engine-bench-milvus"
mkdir -p "$work"
eval "$(scripts/test-clients.sh)"
scripts/fetch-models.sh >/dev/null
cargo build --release --quiet
engine="${CARGO_TARGET_DIR:-target}/release/engine"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rm -rf "$work/milvus-data"
"$ENGINE_MILVUS_LITE" server --data-dir "$work/milvus-data" --host 127.0.0.1 --port "$port" >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 600); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.2
done

# The index `engine eval` searches for a corpus (engine::eval::cache_index_dir): a golden set's
# corpus canonicalised, a BEIR directory made absolute as given (`..` and links kept).
cache_dir() {
    python3 - "$1" "$2" <<'PY'
import hashlib, os, sys
kind, corpus = sys.argv[1], sys.argv[2]
corpus = os.path.realpath(corpus) if kind == "golden" else os.path.join(os.getcwd(), corpus)
base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ["HOME"], ".cache")
tag = hashlib.sha256(corpus.encode()).hexdigest()[:8]
print(os.path.join(base, "engine", kind, f"{os.path.basename(corpus)}-{tag}"))
PY
}

# One line per set: local and Milvus nDCG@10 and MRR@10 of hybrid search.
compare() {
    local name="$1" kind="$2" target="$3" corpus="$4"
    local flag=(--golden "$target") index
    index="$(cache_dir "$kind" "$corpus")"
    # A BEIR collection's index is this script's own (reused across runs).
    [ "$kind" = beir ] && index="$work/$name-index" && flag=(--beir "$target" --index "$index")
    "$engine" eval "${flag[@]}" --modes hybrid --json >"$work/$name-local.json" 2>"$work/$name-local.err"
    "$engine" push "milvus://127.0.0.1:$port/$name" --index "$index" 2>&1 | tail -1
    printf '[backend]\nurl = "milvus://127.0.0.1:%s/%s"\ntimeout_ms = 60000\n' "$port" "$name" >"$work/$name.toml"
    "$engine" --config "$work/$name.toml" eval "${flag[@]}" --modes hybrid --json >"$work/$name-milvus.json" 2>"$work/$name-milvus.err"
    python3 - "$name" "$work/$name-local.json" "$work/$name-milvus.json" <<'PY'
import json, sys
def report(path):
    lines = (json.loads(l) for l in open(path).read().splitlines() if l.startswith("{"))
    return next(r for r in lines if "runs" in r)
name, local, milvus = sys.argv[1], report(sys.argv[2]), report(sys.argv[3])
def metric(report, key):
    return next(m[key] for m in report["runs"] if m["mode"] == "hybrid")
for key in ("ndcg@10", "mrr@10"):
    a, b = metric(local, key), metric(milvus, key)
    print(f"| {name} | {key} | {a:.4f} | {b:.4f} | {b - a:+.4f} |")
PY
}

if [ "$what" = quality ] || [ "$what" = all ]; then
    scripts/fetch-corpora.sh >/dev/null
    corpora="${ENGINE_CORPORA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/engine/corpora}"
    echo "| set | metric | local hybrid | Milvus legs | Δ |"
    echo "|---|---|---|---|---|"
    compare scifact beir "$data/scifact" "$data/scifact"
    compare code golden golden/code golden/code/corpus
    for set in click ripgrep pino; do
        compare "$set" golden "golden/$set" "$corpora/$set"
    done
fi

if [ "$what" = scale ] || [ "$what" = all ]; then
    corpus="$work/scale-$chunks"
    if [ ! -f "$corpus/corpus.jsonl" ]; then
        mkdir -p "$corpus"
        # Documents of SciFact and CoSQA dev, copy after copy, each copy's text carrying its
        # number so every chunk has its own content id, until there are $chunks documents.
        python3 - "$data" "$corpus/corpus.jsonl" "$chunks" <<'PY'
import json, sys
data, out, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
docs = []
for name in ("scifact", "cosqa-dev"):
    for line in open(f"{data}/{name}/corpus.jsonl"):
        d = json.loads(line)
        # The first 600 characters: one chunk per document.
        docs.append((f"{name}:{d['_id']}", d.get("title", ""), d["text"][:600]))
with open(out, "w") as f:
    n = 0
    while n < want:
        copy = n // len(docs)
        for _id, title, text in docs[: want - n]:
            f.write(json.dumps({"_id": f"{copy}:{_id}", "title": title, "text": f"{text} (copy {copy})"}) + "\n")
            n += 1
PY
    fi
    ENGINE_MILVUS_URL="milvus://127.0.0.1:$port/scale" \
        ENGINE_BENCH_INDEX="$work/scale-$chunks-index" \
        ENGINE_BENCH_CORPUS="$corpus" \
        ENGINE_BENCH_QUERIES="$data/scifact/queries.jsonl:$data/cosqa-dev/queries.jsonl" \
        cargo bench --quiet --bench milvus
    echo "Milvus Lite data directory after the push: $(du -sh "$work/milvus-data" | cut -f1)"
fi
