#!/usr/bin/env bash
# Every embedder of the models manifest through the whole engine, side by side: the golden sets
# (each half: ranking in bm25/vector/hybrid and the hook's answered / silent / "high" figures, with
# the default [abstain] model and with one refitted for the model, leave-one-set-out),
# SciFact test and CoSQA dev (bm25, vector, hybrid), indexing throughput (SciFact, from scratch)
# and the time to embed one short query. Each model gets its own cache directory, so its indexes
# are reused on a later run (the golden and BEIR indexes are built once per model).
#
#   scripts/bench/compare-models.sh [MODEL...]   # default: the default model, bge-small, e5-small
#
# Prints one block per model, then a Markdown table; raw reports are kept in $out (printed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
data="${ENGINE_DATASETS:-../shared/datasets}"
engine="${CARGO_TARGET_DIR:-target}/release/engine"
cache="${ENGINE_COMPARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/engine-compare}"
out="${ENGINE_COMPARE_OUT:-$cache/reports}"
corpora="${ENGINE_CORPORA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/engine/corpora}"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(default bge-small e5-small)
scripts/fetch-models.sh $(for m in "${models[@]}"; do [ "$m" = default ] || echo "--embedder $m"; done) >/dev/null
scripts/fetch-corpora.sh >/dev/null
mkdir -p "$out"
queries=(
  "how does the session store survive a deploy" "where are retries configured" "why was the cache removed"
  "what does the flag for hidden files do" "how to log to a file" "parse command line options"
  "when is the index rebuilt" "what happens on timeout" "which database do we use" "how are errors reported"
)
for m in "${models[@]}"; do
  cfg="$out/$m.toml"
  if [ "$m" = default ]; then echo "[embed]" > "$cfg"; else printf '[embed]\nmodel = "%s"\n' "$m" > "$cfg"; fi
  export XDG_CACHE_HOME="$cache/$m" ENGINE_CORPORA_DIR="$corpora"
  echo "== $m"
  # Throughput: SciFact from scratch (the embedding cache lives in the index, so none is reused);
  # ENGINE_COMPARE_KEEP=1 keeps an index already built (for quality figures alone).
  [ "${ENGINE_COMPARE_KEEP:-0}" = 1 ] || rm -rf "$cache/$m/throughput"
  start=$(date +%s.%N)
  "$engine" index --beir "$data/scifact" --index "$cache/$m/throughput" --config "$cfg" > "$out/$m.index.txt" 2>&1
  end=$(date +%s.%N)
  chunks=$("$engine" status --index "$cache/$m/throughput" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["chunks"])')
  python3 -c "print(f'indexing: {$chunks} chunks in {$end-$start:.1f} s = {$chunks/($end-$start):.1f} chunks/s')" | tee "$out/$m.speed.txt"
  # One short query at a time (batch size 1), after a warm-up text.
  "$engine" embed --config "$cfg" --batch-size 1 "warm up" "${queries[@]}" 2>&1 | sed -n 1p | tee -a "$out/$m.speed.txt"
  "$engine" eval --beir "$data/scifact" --index "$cache/$m/throughput" --split test --modes bm25,vector,hybrid --config "$cfg" --json > "$out/$m.scifact.json"
  "$engine" eval --beir "$data/cosqa-dev" --modes bm25,vector,hybrid --config "$cfg" --json > "$out/$m.cosqa.json"
  # The golden gate's figures for this model: its exit code (thresholds) is reported, not fatal.
  "$engine" eval --config "$cfg" --json --features "$out/$m.features.jsonl" > "$out/$m.golden.json" \
    2> "$out/$m.golden.err" || echo "golden gate: exit $? (thresholds are fitted to the default model)"
  grep "hook path" "$out/$m.golden.err" | sed 's/^engine: hook path: //' > "$out/$m.hook.txt" || true
  # The abstention model refitted for this model, each set left out in turn (its cosines are on
  # another scale than the default's, for which [abstain] is fitted).
  python3 scripts/fit/fit-abstain.py "$out/$m.features.jsonl" > "$out/$m.loso.txt"
done
python3 scripts/bench/compare-models.py "$out" "${models[@]}"
