#!/usr/bin/env python3
"""How far abstention and passage packing can take a transcript set's answerable prompts, measured
on the retrieval the engine has (issue 36, items 2 and 4). Two studies, dev half only unless
--held-out is given (measure with it; never design with it):

1. Ceiling: for each answerable prompt, whether the first K chunks of `engine search` (hybrid,
   vector, bm25), shown whole with their titles, contain every `expect` entry, and the characters
   that takes. No abstention, no block layout: what any packing of K passages could reach.
2. A memory-only abstention model: the five features of scripts/fit/fit-abstain.py fitted on this
   set alone, leave one session out (fit on the others' prompts, test on the session's), and once
   on every training prompt against the other half. A prompt counts as answered when the model
   speaks and the context the engine gives when it always speaks holds the answer.

    engine eval --golden golden/transcripts --features F.jsonl
    printf '[abstain]\\nmemory_threshold = 0.0\\n' > always.toml
    engine eval --golden golden/transcripts --config always.toml --features ALWAYS.jsonl
    python3 scripts/research/memory-ceiling.py golden/transcripts/set.toml INDEX CORPUS F.jsonl ALWAYS.jsonl [--held-out]

INDEX is the set's cached index (the newest ~/.cache/engine/golden/transcripts-*), CORPUS the
directory capture wrote the records to (~/.cache/engine/transcripts/transcripts). Run it right after
the two evals: each eval recaptures, so the index's chunk keys change. Pure Python plus the engine.
"""
import json
import math
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fit"))
import logistic  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ENGINE = os.environ.get("ENGINE", os.path.join(ROOT, "target", "release", "engine"))
ANSWERABLE = {"same-words", "other-words"}
KINDS = ["same-words", "other-words", "no-answer", "unrelated"]


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def holds(text, expect):
    """The eval's rule: every entry present, an entry's alternatives split on ' | '."""
    t = text.lower()
    return all(any(a.strip().lower() in t for a in e.split("|")) for e in expect)


def chunks_of(index):
    out = subprocess.run([ENGINE, "export", "--index", index], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def search(index, corpus, text, mode):
    args = [ENGINE, "search", "--index", index, "--no-daemon", "--json", "-k", "50", "--mode", mode, text]
    out = subprocess.run(args, check=True, capture_output=True, text=True, cwd=corpus).stdout
    return json.loads(out)["results"]


def chunk_of(hit, chunks):
    """The exported chunk a hit is (search names chunks by key, export by content): its document's
    chunk whose text holds every piece of the hit's snippet."""
    parts = [norm(p) for p in hit["snippet"].split("…") if len(norm(p)) > 15]
    found = [c for c in chunks if c["document"] == hit["doc"] and all(p in norm(c["text"]) for p in parts)]
    return found[0] if found else None


def ceiling(queries, index, corpus):
    chunks = chunks_of(index)
    ks = [1, 2, 3, 4, 6, 8, 10]
    for mode in ("hybrid", "vector", "bm25"):
        got = {k: Counter() for k in ks}
        size = {k: 0 for k in ks}
        n = Counter()
        for q in queries:
            if q["kind"] not in ANSWERABLE:
                continue
            n[q["kind"]] += 1
            top = [chunk_of(h, chunks) for h in search(index, corpus, q["text"], mode)]
            for k in ks:
                text = "\n".join(c["title"] + "\n" + c["text"] for c in top[:k] if c)
                got[k][q["kind"]] += holds(text, q["expect"])
                size[k] += len(text)
        total = sum(n.values())
        for k in ks:
            per = ", ".join(f"{kind} {got[k][kind]}/{n[kind]}" for kind in sorted(n))
            print(f"{mode:6} first {k:2}: {per}; mean {size[k] // max(total, 1)} chars of chunk text")


def features(row):
    e = row["evidence"]
    return [e["top_cosine"], e["best_coverage"], e["unseen"], float(row["intent"]["conversational"]), e["cosine_gap"]]


def probability(model, x):
    w, b = model
    return 1 / (1 + math.exp(-(sum(a * c for a, c in zip(w, x)) + b)))


def fit(rows, keep):
    model = logistic.fit([features(r) for r in rows], [r["kind"] in ANSWERABLE for r in rows],
                         iterations=4000, rate=0.5, l2=0.01)
    kept = sorted(probability(model, features(r)) for r in rows if r["kind"] in ANSWERABLE)
    return model, kept[int(math.floor((1 - keep) * len(kept)))]


def score(model, th, rows, always):
    c, n = Counter(), Counter()
    for r in rows:
        speaks = probability(model, features(r)) >= th
        n[r["kind"]] += 1
        c[r["kind"]] += (speaks and always[r["id"]]["answered"]) if r["kind"] in ANSWERABLE else not speaks
    return c, n


def show(c, n):
    return ", ".join(f"{k} {'answered' if k in ANSWERABLE else 'silent'} {c[k]}/{n[k]}" for k in KINDS if n[k])


def abstention(queries, feature_file, always_file):
    session = {q["id"]: q.get("session", "") for q in queries}
    rows = [json.loads(line) for line in open(feature_file)]
    rows = [r for r in rows if r["searched"] and r["evidence"] and r["evidence"]["top_cosine"] is not None]
    always = {json.loads(line)["id"]: json.loads(line) for line in open(always_file)}
    dev = [r for r in rows if not r["held_out"]]
    held = [r for r in rows if r["held_out"]]
    sessions = sorted({session[r["id"]] for r in dev if session[r["id"]]})
    for keep in (0.7, 0.8, 0.9):
        total_c, total_n = Counter(), Counter()
        for left in sessions:
            # Prompts without a session (near-topic probes of no session) always train.
            train = [r for r in dev if session[r["id"]] != left]
            test = [r for r in dev if session[r["id"]] == left]
            model, th = fit(train, keep)
            c, n = score(model, th, test, always)
            total_c.update(c)
            total_n.update(n)
            print(f"keep {keep} leave out {left}: threshold {th:.2f}; {show(c, n)}")
        print(f"keep {keep} leave-one-session-out, dev: {show(total_c, total_n)}")
        if "--held-out" in sys.argv:
            model, th = fit(dev, keep)
            print(f"keep {keep} fitted on dev, held-out: {show(*score(model, th, held, always))}")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 5:
        sys.exit(__doc__)
    set_toml, index, corpus, feature_file, always_file = args
    queries = tomllib.load(open(set_toml, "rb"))["query"]
    half = [q for q in queries if q.get("held_out", False) == ("--held-out" in sys.argv)]
    ceiling(half, index, corpus)
    abstention(queries, feature_file, always_file)


if __name__ == "__main__":
    main()
