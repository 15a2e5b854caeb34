#!/usr/bin/env bash
# What a model reads per `engine mcp` search: the characters of each result's structuredContent
# (serialised as compact JSON, the way Claude Code hands it to the model) and of its text content,
# over every query of the golden sets named (default: memory, code, and click when its corpus is
# fetched: answerable, no-answer and chatter prompts), each search with the tool's defaults.
# Also counts the results whose abstention warning ("nothing here seems to answer this") is in the
# text and in the structured content. Several binaries side by side (e.g. an older build against
# this one): the indexes are built once, by the last binary named.
#   scripts/bench/bench-mcp-size.sh [ENGINE_BINARY…]     (default: this checkout's release build)
#   ENGINE_MCP_SIZE_SETS="memory code click pino ripgrep" to choose the sets
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
binaries=()
for b in "$@"; do binaries+=("$(realpath "$b")"); done
if [ ${#binaries[@]} -eq 0 ]; then
    cargo build --release --quiet
    binaries=("$(pwd)/${CARGO_TARGET_DIR:-target}/release/engine")
fi
scratch="$(mktemp -d "${TMPDIR:-/tmp}/engine-mcp-size-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
exec python3 - "$scratch" "${ENGINE_MCP_SIZE_SETS:-memory code click}" "${binaries[@]}" <<'PY'
import json, os, statistics, subprocess, sys, tomllib

scratch, wanted, binaries = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
corpora = os.environ.get("ENGINE_CORPORA_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "engine", "corpora")
WARNING = "seems to answer"

def corpus_of(name):
    spec = tomllib.load(open(f"golden/{name}/set.toml", "rb"))
    ref = spec.get("corpus_ref")
    path = os.path.join(corpora, ref) if ref else os.path.join("golden", name, spec.get("corpus", "corpus"))
    return path, [q["text"] for q in spec["query"]]

class Server:
    def __init__(self, exe, index):
        self.p = subprocess.Popen([exe, "mcp", "--index", index], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, cwd=scratch)
        self.next = 0
        self.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "bench-mcp-size", "version": "1"}})

    def ask(self, method, params):
        self.next += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}) + "\n").encode())
        self.p.stdin.flush()
        while True:
            answer = json.loads(self.p.stdout.readline())
            if answer.get("id") == self.next:
                return answer

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)

def compact(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

sets = []
for name in wanted:
    corpus, queries = corpus_of(name)
    if not os.path.isdir(corpus):
        print(f"{name}: no corpus at {corpus} (scripts/fetch-corpora.sh); skipped", file=sys.stderr)
        continue
    index = os.path.join(scratch, name)
    built = subprocess.run([binaries[-1], "index", corpus, "--index", index], capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(f"bench-mcp-size: indexing {corpus} failed:\n{built.stderr}")
    sets.append((name, index, queries))

print("| set | queries | binary | structured chars, mean / median | text chars, mean / median | structured / text | warning in text / in structured |")
print("|---|---|---|---|---|---|---|")
for name, index, queries in sets:
    for exe in binaries:
        s = Server(exe, index)
        structured, text, warned_text, warned_structured = [], [], 0, 0
        for q in queries:
            r = s.ask("tools/call", {"name": "search", "arguments": {"query": q}})["result"]
            if r.get("isError"):
                sys.exit(f"bench-mcp-size: search {q!r} failed: {r}")
            t = "".join(c["text"] for c in r["content"] if c["type"] == "text")
            j = compact(r.get("structuredContent"))
            structured.append(len(j))
            text.append(len(t))
            warned_text += WARNING in t
            warned_structured += WARNING in j
        s.close()
        label = os.path.relpath(exe) if exe.startswith(os.getcwd()) else exe
        print(f"| {name} | {len(queries)} | {label} | {statistics.mean(structured):.0f} / {statistics.median(structured):.0f} "
              f"| {statistics.mean(text):.0f} / {statistics.median(text):.0f} | {sum(structured) / sum(text):.2f} "
              f"| {warned_text} / {warned_structured} |")
PY
