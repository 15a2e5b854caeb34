#!/usr/bin/env bash
# Leave-one-corpus-out check of the abstention model on every golden set: fits the model on all
# sets but one (scripts/fit/fit-abstain.py), then runs the hook on the set left out with that fit,
# and prints, per set, the shipped model's hook line and the left-out fit's, side by side.
#
#   bash scripts/fit/loco-abstain.sh [OUT_DIR]     # default: a temporary directory
#
# The golden sets' indexes are built on first use (as `engine eval --golden golden` does).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
engine="${ENGINE:-target/release/engine}"
"$engine" eval --golden golden --features "$out/features.jsonl" > "$out/shipped.txt" || [ $? -eq 5 ]  # 5: a threshold missed
python3 scripts/fit/fit-abstain.py "$out/features.jsonl" --loco-dir "$out/loco" > "$out/fit.txt"
cat "$out/fit.txt"
echo
for cfg in "$out"/loco/*.toml; do
    set_name="$(basename "$cfg" .toml)"
    echo "== $set_name"
    grep -E "^$set_name \(" "$out/shipped.txt" | sed 's/^/shipped:   /'
    "$engine" --config "$cfg" eval --golden "golden/$set_name" > "$out/$set_name.txt" 2>&1 || true
    grep -E "^$set_name \(" "$out/$set_name.txt" | sed 's/^/left out:  /'
done
