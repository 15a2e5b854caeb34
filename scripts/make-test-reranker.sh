#!/usr/bin/env bash
# Generates models/test-reranker/ (the tiny cross-encoder the tests use; see the .py for what it
# is) unless it is already there. Installs the `onnx` Python package (pinned) into
# models/.pydeps from PyPI the first time; needs scripts/fetch-models.sh to have run (it copies
# the tokenizer files).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="${ENGINE_MODELS_DIR:-$root/models}"
[ -f "$models/test-reranker/model.onnx" ] && exit 0
python="${PYTHON:-python3}"
deps="$models/.pydeps"
if ! PYTHONPATH="$deps" "$python" -c "import onnx" 2>/dev/null; then
    "$python" -m pip install --quiet --disable-pip-version-check --target "$deps" "onnx==1.19.1"
fi
PYTHONPATH="$deps" "$python" "$root/scripts/make-test-reranker.py" "$models"
