#!/usr/bin/env python3
"""Summarises scripts/bench/compare-models.sh's reports as Markdown tables, one column per model.

    python3 scripts/bench/compare-models.py REPORTS_DIR MODEL...
"""
import json
import os
import re
import sys

out, models = sys.argv[1], sys.argv[2:]


def lines(path):
    if not os.path.exists(path):
        return []
    return [json.loads(l) for l in open(path) if l.strip().startswith("{")]


def beir(model, name):
    """{mode: (ndcg, mrr)} of a BEIR report."""
    rows = lines(os.path.join(out, f"{model}.{name}.json"))
    return {r["mode"]: (r["ndcg@10"], r["mrr@10"]) for rep in rows for r in rep.get("runs", [])}


def golden(model):
    """{(set, mode): (ndcg, mrr)} of each golden set's held-out half."""
    found = {}
    for rep in lines(os.path.join(out, f"{model}.golden.json")):
        for r in rep.get("runs", []):
            g = r.get("breakdown", {}).get("split", {}).get("held-out")
            if g and g.get("queries"):
                found[(rep["dataset"], r["mode"])] = (g["ndcg@10"], g["mrr@10"])
    return found


HOOK = re.compile(r"^(\S+) \(held-out\): answered (\d+)/(\d+) .*?silent on no-answer (\d+)/(\d+) .*?"
                  r"silent on chatter (\d+)/(\d+) .*?high relevant (\d+)/(\d+)")


def hooks(model):
    found = {}
    path = os.path.join(out, f"{model}.hook.txt")
    for line in open(path) if os.path.exists(path) else []:
        m = HOOK.match(line.strip())
        if m:
            n = [int(x) for x in m.groups()[1:]]
            found[m.group(1)] = f"{n[0]}/{n[1]} · {n[2] + n[4]}/{n[3] + n[5]} · {n[6]}/{n[7]}"
    return found


LOSO = re.compile(r"^\s+on (\S+): answerable answered (\d+)/(\d+)(?:, no-answer silent (\d+)/(\d+))?(?:, chatter silent (\d+)/(\d+))?")


def loso(model):
    """{set: text} of the hook with the abstention model refitted on the other sets."""
    found = {}
    path = os.path.join(out, f"{model}.loso.txt")
    for line in open(path) if os.path.exists(path) else []:
        m = LOSO.match(line)
        if m:
            n = [int(x) if x else 0 for x in m.groups()[1:]]
            found[m.group(1)] = f"{n[0]}/{n[1]} · {n[2] + n[4]}/{n[3] + n[5]}"
    return found


def speed(model):
    path = os.path.join(out, f"{model}.speed.txt")
    text = open(path).read() if os.path.exists(path) else ""
    rate = re.search(r"= ([\d.]+) chunks/s", text)
    embed = re.search(r"embedded (\d+) texts in ([\d.]+) ms", text)
    per_query = float(embed.group(2)) / int(embed.group(1)) if embed else None
    return (rate.group(1) if rate else "-"), (f"{per_query:.1f}" if per_query else "-")


def row(label, cells):
    print(f"| {label} | " + " | ".join(cells) + " |")


print("| measured | " + " | ".join(models) + " |")
print("|---|" + "---|" * len(models))
fmt = lambda v: f"{v[0]:.3f} / {v[1]:.3f}" if v else "-"
for name, title in (("scifact", "SciFact test"), ("cosqa", "CoSQA dev")):
    for mode in ("vector", "hybrid"):
        row(f"{title}, {mode}, nDCG@10 / MRR@10", [fmt(beir(m, name).get(mode)) for m in models])
g = {m: golden(m) for m in models}
for s in sorted({s for m in models for (s, _) in g[m]}):
    for mode in ("vector", "hybrid"):
        row(f"{s} held-out, {mode}, nDCG@10 / MRR@10", [fmt(g[m].get((s, mode))) for m in models])
h = {m: hooks(m) for m in models}
for s in sorted({s for m in models for s in h[m]}):
    row(f"{s} held-out hook: answered · silent · high relevant", [h[m].get(s, "-") for m in models])
lo = {m: loso(m) for m in models}
for s in sorted({s for m in models for s in lo[m]}):
    row(f"{s} (all prompts), abstention refitted leaving it out: answered · silent", [lo[m].get(s, "-") for m in models])
sp = {m: speed(m) for m in models}
row("indexing SciFact from scratch, chunks/s", [sp[m][0] for m in models])
row("one short query embedded, ms", [sp[m][1] for m in models])
