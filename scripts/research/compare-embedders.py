#!/usr/bin/env python3
"""Vector-only nDCG@10 and MRR@10 of a BERT-style ONNX embedding model on a BEIR collection: the
whole corpus embedded (title + text, 256 tokens), exact cosine search. A harness for comparing
other embedding models with the shipped one before any engine work; not used by the engine.

    python3 scripts/research/compare-embedders.py MODEL.onnx TOKENIZER.json cls|mean QUERY_PREFIX DOC_PREFIX \
        ../shared/datasets/cosqa-dev dev

Needs onnxruntime, numpy and tokenizers from PyPI (e.g. the venv of scripts/bench/bench-int8.sh). On the
shipped graph (models/model.onnx, mean pooling, no prefixes) it gives CoSQA dev 0.6057 / 0.5358,
within 0.001 of the engine's vector leg (`engine eval --beir`: 0.605 / 0.535).
"""
import json, math, sys
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

model, tok_file, pooling, qpre, dpre, coll, split = sys.argv[1:8]
so = ort.SessionOptions()
so.intra_op_num_threads = 2
sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
inputs = {i.name for i in sess.get_inputs()}
tok = Tokenizer.from_file(tok_file)
tok.no_padding()
tok.enable_truncation(256)


def embed(texts, batch=16):
    enc = tok.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(enc[i].ids))
    out = None
    for s in range(0, len(order), batch):
        idx = order[s:s + batch]
        width = max(len(enc[i].ids) for i in idx)
        ids = np.zeros((len(idx), width), np.int64)
        mask = np.zeros_like(ids)
        for r, i in enumerate(idx):
            ids[r, :len(enc[i].ids)] = enc[i].ids
            mask[r, :len(enc[i].ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        h = sess.run(None, feed)[0]
        v = h[:, 0, :] if pooling == "cls" else (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        if out is None:
            out = np.zeros((len(texts), v.shape[1]), np.float32)
        out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


docs = [json.loads(line) for line in open(f"{coll}/corpus.jsonl")]
queries = {q["_id"]: q["text"] for q in map(json.loads, open(f"{coll}/queries.jsonl"))}
qrels = {}
for n, line in enumerate(open(f"{coll}/qrels/{split}.tsv")):
    qid, did, grade = line.rstrip("\n").split("\t")[:3]
    if n == 0 and not grade.strip().isdigit():
        continue
    if int(grade) > 0:
        qrels.setdefault(qid, {})[did] = int(grade)
qids = [q for q in qrels if q in queries]
dv = embed([dpre + ((d.get("title") or "") + "\n" + d["text"]).strip() for d in docs])
qv = embed([qpre + queries[q] for q in qids], batch=1)
scores = qv @ dv.T
ndcg = mrr = 0.0
for r, q in enumerate(qids):
    top = np.argsort(-scores[r])[:10]
    rel = qrels[q]
    dcg = sum((2 ** rel.get(docs[j]["_id"], 0) - 1) / math.log2(k + 2) for k, j in enumerate(top))
    ideal = sorted(rel.values(), reverse=True)[:10]
    ndcg += dcg / sum((2 ** g - 1) / math.log2(k + 2) for k, g in enumerate(ideal))
    mrr += next((1 / (k + 1) for k, j in enumerate(top) if docs[j]["_id"] in rel), 0.0)
print(f"{model} {coll} ({split}, {len(qids)} queries): nDCG@10 {ndcg / len(qids):.4f}  MRR@10 {mrr / len(qids):.4f}")
