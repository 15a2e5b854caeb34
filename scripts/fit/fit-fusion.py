#!/usr/bin/env python3
"""Fits the learned fusion (`[fuse] method = "learned"`, issue 17) and measures it side by side
with the engine's hybrid RRF order on collections it was not fitted on. Its figures re-sort the
hits by the model alone; the engine also multiplies the model's probability by the candidate's
boosts (test files, expansion matches), so measure a fit in the engine with `--loco-dir`.

Input: the candidate lines `engine eval --beir DIR --features FILE` writes (one JSON line per judged
query: its intent, its judgments, and its first 100 hybrid hits with each leg's rank and score,
cosine, coverage of the query's term weight, fused score and grade; under `method = "learned"`, the
default, also the model's inputs, which this script then reads as they are). Each document is one
candidate (its best chunk); the model is a class-balanced logistic regression of "relevant" on
features computed from what the legs already returned (no model call), scored per query.

    engine eval --beir ../shared/datasets/scifact --split train --modes hybrid --features /tmp/sf-train.jsonl
    engine eval --beir ../shared/datasets/scifact --modes hybrid --features /tmp/sf-test.jsonl
    engine eval --beir ../shared/datasets/cosqa-dev --modes hybrid --features /tmp/cosqa.jsonl
    engine eval --golden golden --features /tmp/golden.jsonl
    python3 scripts/fit/fit-fusion.py --train /tmp/sf-train.jsonl /tmp/golden.jsonl \\
        --report /tmp/sf-test.jsonl /tmp/cosqa.jsonl /tmp/golden.jsonl

A golden file gives its sets' dev halves to fitting and their held-out halves to reporting.
With --leave-one-out, each collection of --train is also left out in turn: the model is fitted on
the others and measured on that collection's reported queries (SciFact test for SciFact train, a
golden set's held-out half for its dev half). With --loco-dir DIR it also writes DIR/<collection>.toml
(`[fuse] method = "learned"` with the fit without that collection), so `engine --config
DIR/click.toml eval --golden golden/click --split held-out` measures it in the engine.

Prints the fitted weights (also as the `[fuse]` section `method = "learned"` reads) and, per
file, nDCG@10 and MRR@10 of the RRF order and of the learned order. Pure Python: no packages needed.
"""
import json
import math
import os
import sys

import logistic

NAMES = [
    "lexical found", "lexical rank", "bm25 / best", "vector found", "vector rank", "cosine",
    "cosine / best", "coverage", "fused / best", "both legs",
    "code x bm25", "code x cosine", "concept x bm25", "concept x cosine",
]


def candidates(row):
    """Features of each document of one query (its best chunk), in hybrid order."""
    hits = row["hits"]
    best_bm25 = max([h["bm25"] or 0 for h in hits] + [1e-6])
    best_cos = max([h["cosine"] or 0 for h in hits] + [1e-6])
    best_score = max([h["score"] for h in hits] + [1e-9])
    intent = dict(row["intent"]["probabilities"])
    out = {}
    for h in hits:
        if h["doc"] in out:
            continue
        if h.get("features"):
            # Written under `method = "learned"`: the engine's own inputs, since the hit's score
            # is by then the model's output and "fused / best" would read it back.
            out[h["doc"]] = h["features"]
            continue
        lr, vr = h["lexical_rank"], h["vector_rank"]
        b, c = (h["bm25"] or 0) / best_bm25, h["cosine"] or 0
        out[h["doc"]] = [
            1.0 if lr else 0.0, 10 / (10 + lr) if lr else 0.0, b,
            1.0 if vr else 0.0, 10 / (10 + vr) if vr else 0.0, c, c / best_cos,
            h["coverage"] or 0.0, h["score"] / best_score, 1.0 if lr and vr else 0.0,
            intent.get("code", 0) * b, intent.get("code", 0) * c / best_cos,
            intent.get("concept", 0) * b, intent.get("concept", 0) * c / best_cos,
        ]
    return out


def ndcg(ranked, judged, k=10):
    dcg = sum((2 ** judged.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(judged.values(), reverse=True)[:k]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def mrr(ranked, judged, k=10):
    return next((1 / (i + 1) for i, d in enumerate(ranked[:k]) if judged.get(d, 0) > 0), 0.0)


def measure(rows, score):
    n = m = 0.0
    for row in rows:
        cands = candidates(row)
        ranked = sorted(cands, key=lambda d: -score(cands[d]))
        n += ndcg(ranked, row["judged"])
        m += mrr(ranked, row["judged"])
    return n / len(rows), m / len(rows)


def fit(rows):
    """The logistic model of "relevant" over every candidate of the queries that have one."""
    xs, ys = [], []
    for row in rows:
        cands = candidates(row)
        if not any(row["judged"].get(d, 0) > 0 for d in cands):
            continue
        for d, x in cands.items():
            xs.append(x)
            ys.append(1.0 if row["judged"].get(d, 0) > 0 else 0.0)
    return logistic.fit(xs, ys, iterations=300, rate=0.5, l2=1e-3)


def load(path, fitting):
    """The judged queries of a file, by group: a BEIR file is one group; a golden file
    (`engine eval --golden golden --features FILE`, the hook's 24 hits) gives each set's dev half
    to fitting and its held-out half to reporting."""
    groups = {}
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            if not row.get("hits") or not any(g > 0 for g in row.get("judged", {}).values()):
                continue
            if "held_out" in row:
                if row["held_out"] == fitting:
                    continue
                name = f"{row['set']} ({'held-out' if row['held_out'] else 'dev'})"
            else:
                name = row["set"]
            groups.setdefault(name, []).append(row)
    return groups


def main(args):
    if "--train" not in args or "--report" not in args:
        sys.exit(__doc__)
    t, r = args.index("--train"), args.index("--report")
    upto = lambda i, j: args[i + 1:j if j > i else None]
    loco_dir = None
    if "--loco-dir" in args:
        at = args.index("--loco-dir") + 1
        if at >= len(args) or "--leave-one-out" not in args:
            sys.exit("--loco-dir DIR needs a directory and --leave-one-out")
        loco_dir = args[at]
    files = lambda paths: [p for p in paths if not p.startswith("--") and p != loco_dir]
    train, report = files(upto(t, r)), files(upto(r, t))
    fitted = {name: rows for p in train for name, rows in load(p, True).items()}
    weights, bias = fit([row for rows in fitted.values() for row in rows])
    print("fitted on " + ", ".join(f"{n} ({len(r)})" for n, r in fitted.items()) + ":")
    for name, w in zip(NAMES, weights):
        print(f"  {name:18} {w:+.3f}")
    print("\n[fuse]  # method = \"learned\" uses these\nlearned_weights = ["
          + ", ".join(f"{w:.4f}" for w in weights) + f"]\nlearned_bias = {bias:.4f}")
    learned = lambda x: sum(a * b for a, b in zip(weights, x))
    fused = lambda x: x[NAMES.index("fused / best")]
    print("\n| queries | n | RRF nDCG@10 | RRF MRR@10 | learned nDCG@10 | learned MRR@10 |\n|---|---|---|---|---|---|")
    reported = {name: rows for p in report for name, rows in load(p, False).items()}
    for name, rows in [(f"{n} (fitted on)", r) for n, r in fitted.items()] + list(reported.items()):
        (rn, rm), (ln, lm) = measure(rows, fused), measure(rows, learned)
        print(f"| {name} | {len(rows)} | {rn:.4f} | {rm:.4f} | {ln:.4f} | {lm:.4f} |")
    if "--leave-one-out" in args:
        base = lambda name: name.split(" (")[0].split("/")[0]
        print("\nLeave one collection out (fitted on every other --train collection):\n")
        print("| left out | reported on | n | RRF nDCG@10 | RRF MRR@10 | learned nDCG@10 | learned MRR@10 |")
        print("|---|---|---|---|---|---|---|")
        for out in sorted({base(n) for n in fitted}):
            w, b = fit([row for n, rows in fitted.items() if base(n) != out for row in rows])
            if loco_dir:
                os.makedirs(loco_dir, exist_ok=True)
                with open(os.path.join(loco_dir, f"{out}.toml"), "w") as f:
                    f.write(f"# [fuse] learned fusion fitted on every --train collection but {out}\n[fuse]\n"
                            f"method = \"learned\"\nlearned_weights = [{', '.join(f'{x:.4f}' for x in w)}]\n"
                            f"learned_bias = {b:.4f}\n")
            score = lambda x, w=w: sum(a * c for a, c in zip(w, x))
            for name, rows in reported.items():
                if base(name) == out:
                    (rn, rm), (ln, lm) = measure(rows, fused), measure(rows, score)
                    print(f"| {out} | {name} | {len(rows)} | {rn:.4f} | {rm:.4f} | {ln:.4f} | {lm:.4f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
