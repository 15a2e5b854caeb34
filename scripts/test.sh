#!/usr/bin/env bash
# The whole test suite: installs the models if absent, checks formatting and lints, runs every
# test (unit, integration, model-dependent ones against the real model) and the golden-set gate.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/fetch-models.sh
# Another embedder of the manifest, for the tests that pick one by name (`[embed] model`).
scripts/fetch-models.sh --embedder bge-small
# The optional cross-encoder, for the test that loads it, in a models directory of its own: the
# rest of the suite runs as a user who did not install it.
scripts/fetch-models.sh --reranker --dest models/packaged-reranker
scripts/make-test-reranker.sh
cargo fmt --check
# Modules depend one way: a cycle between two modules, at any level of the tree, fails here
# naming the edges.
python3 scripts/module-cycles.py
cargo clippy --release --all-targets -- -D warnings
# The library's documentation builds without a broken link or a warning.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
# The real clients and servers the integration tests drive the engine with (the MCP Python SDK,
# the Claude Code CLI, the Milvus Lite server the Milvus tests start and stop), pinned and
# installed once from the registries into a cache.
eval "$(scripts/test-clients.sh)"
cargo test --release
# The library's examples, run for real with the fetched model (cargo test has built them).
cargo run --release --quiet --example index_and_search
cargo run --release --quiet --example hook_context
# The golden-set gate: exits 5 naming each metric under golden/thresholds.toml. The real-project
# sets need their corpora (pinned source distributions, sha256-checked, cached after the first run).
scripts/fetch-corpora.sh
cargo run --release --quiet -- eval --golden golden
