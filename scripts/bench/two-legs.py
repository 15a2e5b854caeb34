#!/usr/bin/env python3
"""Two vector legs, fused, against one: from `engine eval --beir ... --features` files of the same
collection made with two embedders (A and B), re-fuses each query's hits with the engine's
weighted RRF (k = 70, the intent profiles of [fuse], probabilities sharpened by 3) and scores
nDCG@10 / MRR@10 of: BM25 + A, BM25 + B, and BM25 + A + B with the vector weight split
evenly or by intent (code, symbol and flow questions lean on A; concept and balanced on B).

A hit a file lists only within its own top 100 hybrid hits, so a leg's rank is known for the
documents its file lists; a missing rank adds nothing, as a leg's cut-off does in the engine.

    python3 scripts/bench/two-legs.py A.features.jsonl B.features.jsonl [LEAN]

LEAN (default 0.75): the share of the vector weight the leaning leg gets.
"""
import json
import math
import sys

K = 70.0
SHARPNESS = 3.0
# [fuse] profiles: (vector, lexical).
PROFILES = {"symbol": (0.2, 0.2), "flow": (0.3, 0.3), "concept": (0.7, 0.2), "code": (0.8, 0.1), "balanced": (0.4, 0.4)}
LEANS_ON_A = {"symbol", "flow", "code"}


def load(path):
    return {q["id"]: q for q in map(json.loads, open(path))}


def ranks(query, leg):
    return {h["doc"]: h[leg] for h in query["hits"] if h.get(leg)}


def mix(query, split):
    """(weight of A, weight of B, weight of BM25) for this query's intent."""
    probs = {name: p**SHARPNESS for name, p in query["intent"]["probabilities"]}
    total = sum(probs.values()) or 1.0
    wa = wb = wl = 0.0
    for name, p in probs.items():
        vector, lexical = PROFILES[name]
        share_a = split(name)
        wa += p / total * vector * share_a
        wb += p / total * vector * (1 - share_a)
        wl += p / total * lexical
    return wa, wb, wl


def fused(legs, weights):
    scores = {}
    for ranked, w in zip(legs, weights):
        for doc, r in ranked.items():
            scores[doc] = scores.get(doc, 0.0) + w / (K + r)
    return sorted(scores, key=lambda d: -scores[d])


def ndcg_mrr(ranking, judged):
    dcg = sum((2 ** judged.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranking[:10]))
    ideal = sorted(judged.values(), reverse=True)[:10]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    mrr = next((1 / (i + 1) for i, d in enumerate(ranking[:10]) if judged.get(d, 0) > 0), 0.0)
    return (dcg / idcg if idcg else 0.0), mrr


def main():
    a, b = load(sys.argv[1]), load(sys.argv[2])
    lean = float(sys.argv[3]) if len(sys.argv) > 3 else 0.75
    configs = {
        "bm25 + A": lambda n: 1.0,
        "bm25 + B": lambda n: 0.0,
        "bm25 + A + B, even": lambda n: 0.5,
        f"bm25 + A + B, by intent ({lean:.2f})": lambda n: lean if n in LEANS_ON_A else 1 - lean,
    }
    sums = {name: [0.0, 0.0] for name in configs}
    common = [q for q in a if q in b]
    for qid in common:
        qa, qb = a[qid], b[qid]
        lexical = {**ranks(qb, "lexical_rank"), **ranks(qa, "lexical_rank")}
        va, vb = ranks(qa, "vector_rank"), ranks(qb, "vector_rank")
        for name, split in configs.items():
            wa, wb, wl = mix(qa, split)
            n, m = ndcg_mrr(fused([lexical, va, vb], [wl, wa, wb]), qa["judged"])
            sums[name][0] += n
            sums[name][1] += m
    print(f"{len(common)} queries; A = {sys.argv[1]}, B = {sys.argv[2]}")
    print("| fusion | nDCG@10 | MRR@10 |\n|---|---|---|")
    for name, (n, m) in sums.items():
        print(f"| {name} | {n / len(common):.3f} | {m / len(common):.3f} |")


if __name__ == "__main__":
    main()
