#!/usr/bin/env bash
# Installs the pinned clients the integration tests drive the engine with, from the registries,
# into a cache (a second run does no network work), and prints the environment the tests read:
#   ENGINE_MCP_PYTHON  a Python with the official MCP SDK (PyPI mcp==2.3.0)
#   ENGINE_CLAUDE      the Claude Code CLI (npm @anthropic-ai/claude-code@2.1.332)
#   ENGINE_MILVUS_LITE the Milvus Lite server (PyPI milvus-lite==3.2.2, with pymilvus==3.0.2 whose
#                      gRPC stubs it serves): the search backend the Milvus tests push to
# Usage: eval "$(scripts/test-clients.sh)"
set -euo pipefail
cache="${XDG_CACHE_HOME:-$HOME/.cache}/engine/test-clients"
mkdir -p "$cache"

mcp="$cache/mcp-2.3.0"
if [ ! -f "$mcp/.complete" ]; then
    rm -rf "$mcp"
    python3 -m venv "$mcp" >&2
    "$mcp/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==2.3.0" >&2
    touch "$mcp/.complete"
fi

claude="$cache/claude-code-2.1.332"
if [ ! -f "$claude/.complete" ]; then
    rm -rf "$claude"
    mkdir -p "$claude"
    npm install --prefix "$claude" --no-fund --no-audit --loglevel=error "@anthropic-ai/claude-code@2.1.332" >&2
    touch "$claude/.complete"
fi

milvus="$cache/milvus-lite-3.2.2"
if [ ! -f "$milvus/.complete" ]; then
    rm -rf "$milvus"
    python3 -m venv "$milvus" >&2
    "$milvus/bin/python" -m pip install --quiet --disable-pip-version-check "milvus-lite==3.2.2" "pymilvus==3.0.2" >&2
    touch "$milvus/.complete"
fi

echo "export ENGINE_MCP_PYTHON='$mcp/bin/python'"
echo "export ENGINE_CLAUDE='$claude/node_modules/.bin/claude'"
echo "export ENGINE_MILVUS_LITE='$milvus/bin/milvus-lite'"
