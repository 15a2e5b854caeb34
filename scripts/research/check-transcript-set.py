#!/usr/bin/env python3
"""Checks the blind-written prompts of golden/transcripts/set.toml (kinds other-words, no-answer
with a probe list, unrelated) against the raw transcripts in tests/data/transcripts.

    python3 scripts/research/check-transcript-set.py [SET_TOML]

- every expect alternative occurs (case-insensitive) in the raw session JSONL and in its decoded text
- no query text contains any expect alternative
- after_compaction=true: at least one expect entry has no alternative before the last compact_boundary
  after_compaction=false: every expect entry has an alternative before the boundary
- no-answer: probe terms (below) absent from all three sessions
- held_out alternates false/true within each (session, kind)
"""
import json, os, subprocess, sys, tomllib
from collections import defaultdict, Counter

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
T = os.path.join(ROOT, "tests", "data", "transcripts")
FILES = {
    "8463c716": "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
    "4d5611e5": "4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "short": "short.jsonl",
}
TOML = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "golden", "transcripts", "set.toml")


def read(name):
    """A vendored transcript's text, unpacked with zstd when only name.zst is there."""
    path = os.path.join(T, name)
    if os.path.exists(path):
        return open(path, encoding="utf-8").read()
    return subprocess.run(["zstd", "-dc", path + ".zst"], check=True, capture_output=True).stdout.decode("utf-8")

def strings(o):
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for v in o.values():
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)

S = {}
for k, p in FILES.items():
    raw_lines = read(p).splitlines()
    dec_lines = []
    boundary = None
    for i, l in enumerate(raw_lines):
        d = json.loads(l)
        if d.get("type") == "system" and d.get("subtype") == "compact_boundary":
            boundary = i
        dec_lines.append("\n".join(strings(d)))
    S[k] = dict(raw=[l.lower() for l in raw_lines], dec=[l.lower() for l in dec_lines], boundary=boundary)

def occurs(sess, s, lo=0, hi=None):
    s = s.lower()
    r = S[sess]["raw"][lo:hi]; d = S[sess]["dec"][lo:hi]
    return any(s in l for l in r), any(s in l for l in d)

# near-topic probe terms that would indicate an answer; must be absent in every session
PROBES = {
    "na-8463-01": ["copy button", "copy-to-clipboard", "navigator.clipboard"],
    "na-8463-02": ["virtualiz", "lazy-load", "lazy load", "infinite scroll"],
    "na-8463-03": ["prefers-color-scheme", "dark mode", "dark-mode"],
    "na-8463-04": ["safari", "firefox", "chrome"],
    "na-8463-05": ["web worker", "new worker("],
    "na-8463-06": ["search box", "search input", "find in transcript", "minimap"],
    "na-8463-07": ["right-to-left", "dir=\\\"rtl", "direction: rtl"],
    "na-8463-08": ["benchmark", "benchee", "5000 messages", "5,000"],
    "na-8463-09": ["retention", "purge", "prune"],
    "na-8463-10": ["keyboard nav", "e.key === \\\"j", "e.key === \\\"k"],
    "na-4d56-01": ["local storage", "localstorage.", "sessionstorage.", "push_patch", "query param"],
    "na-4d56-02": ["@media", "768px", "max-width: 6", "min-width: 7"],
    "na-4d56-03": ["copy json", "copy button", "clipboard.write"],
    "na-4d56-04": ["max payload", "payload size", "byte_size(payload"],
    "na-4d56-05": ["expand all", "collapse all", "expand_all", "collapse_all"],
    "na-4d56-06": ["tree view", "json tree", "collapsible", "<details"],
    "na-4d56-07": ["filter by type", "debug filter", "filter_kind"],
    "na-4d56-08": ["paginate the", "transcript pagination", "infinite scroll", "page_size"],
    "na-4d56-09": ["backoff", "rate limit", "rate-limit", "max_retries", "retry_count"],
    "na-4d56-10": ["plt build took", "building plt", "creating plt", "github actions", ".github/workflows"],
    "na-short-01": ["could not start", "failed to start", "shutdown: failed"],
    "na-short-02": ["eaddrinuse", "address already in use"],
    "na-short-03": ["server is running", "running spotterweb.endpoint", "access spotterweb.endpoint at"],
    "na-short-04": ["iex -s"],
    "na-short-05": ["erlang/otp", "otp version", "asdf", "otp 2"],
}

q = [x for x in tomllib.load(open(TOML, "rb"))["query"] if x.get("kind") in ("other-words", "no-answer", "unrelated")]
# The near-topic prompts written with the same-words ones (tr-41..54) have no probe list here.
q = [x for x in q if not x["id"].startswith("tr-")]
errs = []; warns = []
ids = Counter(x["id"] for x in q)
for i, c in ids.items():
    if c > 1: errs.append(f"duplicate id {i}")
for x in q:
    sess, kind, exp = x["session"], x["kind"], x["expect"]
    assert kind in ("other-words", "no-answer", "unrelated"), x["id"]
    text = x["text"].lower()
    if kind != "other-words":
        if exp: errs.append(f"{x['id']}: expect must be [] for {kind}")
        if x["after_compaction"]: errs.append(f"{x['id']}: after_compaction true on {kind}")
    b = S[sess]["boundary"]
    pre_flags = []
    for e in exp:
        alts = [a.strip() for a in e.split(" | ")]
        pre_any = False
        for a in alts:
            rr, dd = occurs(sess, a)
            if not rr: errs.append(f"{x['id']}: '{a}' not in raw {sess}")
            if not dd: errs.append(f"{x['id']}: '{a}' not in decoded {sess}")
            if a.lower() in text: errs.append(f"{x['id']}: text contains expect '{a}'")
            if b is not None and any(occurs(sess, a, 0, b)):
                pre_any = True
        pre_flags.append(pre_any)
    if kind == "other-words" and sess != "short":
        if x["after_compaction"] and all(pre_flags):
            errs.append(f"{x['id']}: after_compaction=true but every expect entry also occurs before boundary")
        if x["after_compaction"] and any(pre_flags):
            warns.append(f"{x['id']}: some (not all) expect entries also occur before boundary: {pre_flags}")
        if not x["after_compaction"] and not all(pre_flags):
            errs.append(f"{x['id']}: after_compaction=false but an expect entry occurs only after boundary: {pre_flags}")
    if kind == "no-answer":
        for p in PROBES.get(x["id"], []):
            for s2 in S:
                rr, dd = occurs(s2, p)
                if rr or dd: errs.append(f"{x['id']}: probe '{p}' found in {s2}")
        if x["id"] not in PROBES: warns.append(f"{x['id']}: no probe terms")

# held_out alternation
grp = defaultdict(list)
for x in q: grp[(x["session"], x["kind"])].append(x)
for k, xs in grp.items():
    for j, x in enumerate(xs):
        if x["held_out"] != (j % 2 == 1):
            errs.append(f"{x['id']}: held_out should be {j % 2 == 1}")

print("boundaries:", {k: v["boundary"] for k, v in S.items()})
cnt = Counter((x["session"], x["kind"]) for x in q)
for k in sorted(cnt): print(k, cnt[k],
    "after_compaction:", sum(1 for x in grp[k] if x["after_compaction"]),
    "held_out:", sum(1 for x in grp[k] if x["held_out"]))
for w in warns: print("WARN", w)
for e in errs: print("ERROR", e)
print("OK" if not errs else f"{len(errs)} errors")
sys.exit(1 if errs else 0)
