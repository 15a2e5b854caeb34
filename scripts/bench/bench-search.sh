#!/usr/bin/env bash
# Builds one index over SciFact + CoSQA dev (>= 10k chunks) and runs the search-latency and
# HNSW-recall benches on it. Reuses the index (and its embedding cache) on later runs.
#   scripts/bench/bench-search.sh [INDEX_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
data="${ENGINE_DATASETS:-../shared/datasets}"
index="${1:-${TMPDIR:-/tmp}/engine-bench-both}"
corpus="${TMPDIR:-/tmp}/engine-bench-corpus"
scripts/fetch-models.sh >/dev/null
cargo build --release --quiet
mkdir -p "$corpus"
python3 - "$data" "$corpus/corpus.jsonl" <<'PY'
import json, sys
data, out = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    for name in ("scifact", "cosqa-dev"):
        for line in open(f"{data}/{name}/corpus.jsonl"):
            d = json.loads(line)
            d["_id"] = f"{name}:{d['_id']}"
            f.write(json.dumps(d) + "\n")
PY
"${CARGO_TARGET_DIR:-target}/release/engine" index --beir "$corpus" --index "$index"
export ENGINE_BENCH_INDEX="$index"
export ENGINE_BENCH_QUERIES="$data/scifact/queries.jsonl:$data/cosqa-dev/queries.jsonl"
cargo bench --bench vector
cargo bench --bench search
