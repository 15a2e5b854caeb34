#!/usr/bin/env bash
# `engine mcp` speed, as a client sees it over stdio: from starting the server to its first answer
# (the initialize handshake) and to its first search result (index and model loaded), and the
# round trip of a warm `search` and `get` call (request written to the answer read). On an index of
# sample/ built here, and on the SciFact + CoSQA bench index when it exists (scripts/bench/bench-search.sh
# builds it at ${TMPDIR:-/tmp}/engine-bench-both). Prints p50 / p95 per case.
#   scripts/bench/bench-mcp.sh [INDEX_DIR…]       (ENGINE_BENCH_ROUNDS=N: warm calls per index, default 200)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
data="${ENGINE_DATASETS:-../shared/datasets}"
cargo build --release --quiet
exe="$(pwd)/${CARGO_TARGET_DIR:-target}/release/engine"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/engine-mcp-bench-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
indexes=("$@")
if [ ${#indexes[@]} -eq 0 ]; then
    cp -r sample "$scratch/sample"
    "$exe" index "$scratch/sample" >/dev/null 2>&1
    indexes=("$scratch/sample/.engine")
    bench="${TMPDIR:-/tmp}/engine-bench-both"
    [ -f "$bench/CURRENT" ] && indexes+=("$bench")
fi
exec python3 - "$exe" "$data" "${indexes[@]}" <<'PY'
import json, os, subprocess, sys, time

exe, data, indexes = sys.argv[1], sys.argv[2], sys.argv[3:]
rounds = int(os.environ.get("ENGINE_BENCH_ROUNDS", "200"))

SAMPLE = [
    "why did we move sessions to redis?", "how are uploads checked against the quota?",
    "retry with backoff", "rotate the signing key", "double charge on retried payment",
    "thumbnail purge job", "SessionStore::invalidate_user", "what does the error convention say",
    "resumable upload parts", "fitsInQuota", "deploy checklist", "session expiry",
]

def queries_for(index):
    meta = open(os.path.join(index, open(os.path.join(index, "CURRENT")).read().strip(), "meta.json")).read()
    if '"Beir"' not in meta:
        return SAMPLE
    qs = []
    for name in ("scifact", "cosqa-dev"):
        path = os.path.join(data, name, "queries.jsonl")
        if os.path.exists(path):
            with open(path) as f:
                qs += [json.loads(l)["text"] for l in f][:100]
    return qs or SAMPLE

class Server:
    def __init__(self, index):
        self.started = time.perf_counter()
        self.p = subprocess.Popen([exe, "mcp", "--index", index], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next = 0

    def ask(self, method, params=None):
        self.next += 1
        msg = {"jsonrpc": "2.0", "id": self.next, "method": method}
        if params is not None:
            msg["params"] = params
        t = time.perf_counter()
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            answer = json.loads(self.p.stdout.readline())
            if answer.get("id") == self.next:
                break
        if "error" in answer or answer["result"].get("isError"):
            sys.exit(f"bench-mcp: {method} failed: {answer}")
        return answer["result"], (time.perf_counter() - t) * 1e3

    def since_start(self):
        return (time.perf_counter() - self.started) * 1e3

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench-mcp", "version": "1"}}

def pct(v, q):
    v = sorted(v)
    return v[max(0, min(len(v) - 1, int(-(-q * len(v) // 1)) - 1))]

def show(name, v):
    print(f"  {name:<44} n={len(v):<4} p50 {pct(v, .5):8.2f} ms   p95 {pct(v, .95):8.2f} ms")

for index in indexes:
    index = os.path.abspath(index)
    queries = queries_for(index)
    subprocess.run([exe, "status", "--index", index], stdout=subprocess.DEVNULL)  # page cache warm
    chunks = json.loads(subprocess.run([exe, "status", "--index", index, "--json"], capture_output=True).stdout)["chunks"]
    print(f"{index}: {chunks} chunks, {len(queries)} queries")
    first_answer, first_search = [], []
    for i in range(5):
        s = Server(index)
        s.ask("initialize", INIT)
        first_answer.append(s.since_start())
        s.ask("tools/call", {"name": "search", "arguments": {"query": queries[i % len(queries)]}})
        first_search.append(s.since_start())
        s.close()
    s = Server(index)
    s.ask("initialize", INIT)
    for q in queries[:5]:
        s.ask("tools/call", {"name": "search", "arguments": {"query": q}})  # warm up
    search, ids, inside, embed = [], [], [], []
    for i in range(rounds):
        result, ms = s.ask("tools/call", {"name": "search", "arguments": {"query": queries[i % len(queries)], "timings": True}})
        search.append(ms)
        inside.append(result["structuredContent"]["timings_ms"]["total"])
        embed.append(result["structuredContent"]["timings_ms"]["embed"])
        ids += [h["id"] for h in result["structuredContent"]["results"][:1]]
    get = [s.ask("tools/call", {"name": "get", "arguments": {"id": ids[i % len(ids)]}})[1] for i in range(min(rounds, 100))]
    ping = [s.ask("ping")[1] for _ in range(100)]
    s.close()
    show("start -> initialize answered", first_answer)
    show("start -> first search answered (cold)", first_search)
    show("search round trip, warm (k=10, hybrid)", search)
    show("  of which Engine::search (timings_ms.total)", inside)
    show("  of which the query embedding", embed)
    show("get round trip, warm (a hit's chunk)", get)
    show("ping round trip (protocol floor)", ping)
PY
