#!/usr/bin/env python3
"""Fits the abstention model ([abstain] in engine.toml, engine/abstain.rs) and checks that it does
not overfit, leave-one-corpus-out.

Input: the per-prompt features `engine eval --golden golden --features FILE` writes (one JSON line
per prompt: its set, kind, the query-level evidence and intent). The model is a logistic regression
of "answerable" against "no-answer" and "chatter" prompts on five features: the best hit's cosine,
the best coverage of the query's term weight by one of the first hits, the share of that weight no
chunk contains, whether the prompt is conversational, and the vector leg's best cosine minus its
tenth-best. Classes are weighted equally; the
threshold keeps --keep of the training prompts that have an answer.

    engine eval --golden golden --features /tmp/features.jsonl
    python3 scripts/fit/fit-abstain.py /tmp/features.jsonl [--keep 0.96] [--loco-dir DIR] [--dev]

Prints, for every set left out, the fit on the others and the query-level figures on the one left
out; then the fit on every set as an [abstain] section. With --loco-dir it also writes
DIR/<set>.toml (the fit without that set) so `engine eval --config DIR/<set>.toml --golden
golden/<set>` measures the hook on the set left out. With --dev only the sets' dev halves are fitted
on and measured, so the held-out halves stay unseen. Pure Python: no packages needed.
"""
import json
import math
import os
import sys

import logistic

FEATURES = ["w_cosine", "w_coverage", "w_unseen", "w_conversational", "w_gap"]
COSINE_WITHOUT_MODEL = 0.5
GAP_WITHOUT_MODEL = 0.1
# Kinds with an answer (a transcript set splits them by wording); every other kind wants silence.
ANSWERABLE = {"answerable", "same-words", "other-words"}


def features(row):
    e = row["evidence"]
    cosine = e["top_cosine"] if e["top_cosine"] is not None else COSINE_WITHOUT_MODEL
    gap = e["cosine_gap"] if e.get("cosine_gap") is not None else GAP_WITHOUT_MODEL
    conversational = 1.0 if row["intent"]["conversational"] else 0.0
    return [cosine, e["best_coverage"], e["unseen"], conversational, gap]


def fit(xs, ys):
    return logistic.fit(xs, ys, iterations=4000, rate=0.5, l2=0.01)


def probability(model, x):
    w, b = model
    return 1 / (1 + math.exp(-(sum(wi * xi for wi, xi in zip(w, x)) + b)))


def threshold(model, rows, keep):
    kept = sorted(probability(model, features(r)) for r in rows if r["kind"] in ANSWERABLE)
    return kept[int(math.floor((1 - keep) * len(kept)))]


def section(model, th):
    w, b = model
    lines = ["[abstain]"] + [f"{k} = {v:.2f}" for k, v in zip(FEATURES, w)]
    return "\n".join(lines + [f"bias = {b:.2f}", f"threshold = {th:.2f}"]) + "\n"


def figures(model, th, rows):
    out = []
    kinds = [("answerable", True), ("same-words", True), ("other-words", True), ("no-answer", False),
             ("chatter", False), ("unrelated", False)]
    for kind, answers in kinds:
        ps = [probability(model, features(r)) for r in rows if r["kind"] == kind]
        if ps:
            right = sum((p >= th) == answers for p in ps)
            out.append(f"{kind} {'answered' if answers else 'silent'} {right}/{len(ps)}")
    return ", ".join(out)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    keep = float(args[args.index("--keep") + 1]) if "--keep" in args else 0.96
    loco_dir = args[args.index("--loco-dir") + 1] if "--loco-dir" in args else None
    rows = [json.loads(line) for line in open(args[0])]
    rows = [r for r in rows if r["searched"] and r["evidence"]]
    if "--dev" in args:
        rows = [r for r in rows if not r["held_out"]]
    sets = sorted({r["set"] for r in rows})
    for left in sets:
        train = [r for r in rows if r["set"] != left]
        model = fit([features(r) for r in train], [r["kind"] in ANSWERABLE for r in train])
        th = threshold(model, train, keep)
        test = [r for r in rows if r["set"] == left]
        print(f"leave out {left}: w = {[round(v, 2) for v in model[0]]}, bias {model[1]:.2f}, threshold {th:.2f}")
        print(f"    on {left}: {figures(model, th, test)}")
        if loco_dir:
            os.makedirs(loco_dir, exist_ok=True)
            with open(os.path.join(loco_dir, f"{left}.toml"), "w") as f:
                f.write(f"# [abstain] fitted on every set but {left}\n" + section(model, th))
    model = fit([features(r) for r in rows], [r["kind"] in ANSWERABLE for r in rows])
    print("\nfitted on every set:\n" + section(model, threshold(model, rows, keep)), end="")


if __name__ == "__main__":
    main()
