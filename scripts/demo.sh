#!/usr/bin/env bash
# The main job on the bundled sample: installs the models if absent, builds the engine, indexes
# sample/ (notes, code, memory records) and runs a few searches.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/fetch-models.sh
cargo build --release --quiet
engine="${CARGO_TARGET_DIR:-target}/release/engine"
# An index of its own per run, removed on exit: a fixed path would be shared by every user of
# the machine (and by two demos at once).
work="$(mktemp -d "${TMPDIR:-/tmp}/engine-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
index="$work/index"
"$engine" index sample --index "$index"
for q in "why did we move sessions to redis?" "retry_with_backoff" "how are thumbnails cleaned up when the disk is full"; do
  echo
  echo "\$ engine search \"$q\""
  "$engine" search "$q" --index "$index" -k 3
done
# What the Claude Code hook would add to a prompt: the tiered context block.
echo
echo "\$ engine search \"why did we move sessions to redis?\" --format context"
"$engine" search "why did we move sessions to redis?" --index "$index" --format context
