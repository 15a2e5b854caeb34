"""Generates the tiny BERT-shaped cross-encoder the tests use: exact logits to assert against, in
milliseconds (the packaged ms-marco cross-encoder, `fetch-models.sh --reranker`, is tested apart).

Inputs `input_ids`, `attention_mask`, `token_type_ids` [batch, seq] (int64); output `logits`
[batch, 1] (float). The graph embeds tokens with a fixed random table (special tokens zeroed),
mean-pools the query segment (type 0) and the passage segment (type 1) separately, and scores
their dot product: a passage sharing the query's words scores high, an unrelated one low. So the
tests can check what a real cross-encoder path needs — pairs tokenised with segment ids,
truncation, batching, logits — and that ranking follows the scores. It says nothing about the
quality of a real reranker.

Usage: python3 scripts/make-test-reranker.py MODELS_DIR   (writes MODELS_DIR/test-reranker/)
Needs the `onnx` package (scripts/test.sh installs onnx==1.19.1 into models/.pydeps).
"""
import json, os, shutil, sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20261122
DIM = 16
SCALE = 20.0
BIAS = -2.0

def main(models):
    out = os.path.join(models, "test-reranker")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(models, "tokenizer.json")) as f:
        vocab = json.load(f)["model"]["vocab"]
    size = max(vocab.values()) + 1
    rng = np.random.default_rng(SEED)
    table = rng.standard_normal((size, DIM)).astype(np.float32)
    table /= np.linalg.norm(table, axis=1, keepdims=True)
    for tok in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]:
        if tok in vocab:
            table[vocab[tok]] = 0.0

    def const(name, value, dtype=np.float32):
        return numpy_helper.from_array(np.array(value, dtype=dtype), name)

    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["emb"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["types"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["mask", "types"], ["p_mask"]),
        helper.make_node("Sub", ["mask", "p_mask"], ["q_mask"]),
    ]
    for seg in ["q", "p"]:
        nodes += [
            helper.make_node("Unsqueeze", [f"{seg}_mask", "axis_last"], [f"{seg}_mask3"]),
            helper.make_node("Mul", ["emb", f"{seg}_mask3"], [f"{seg}_emb"]),
            helper.make_node("ReduceSum", [f"{seg}_emb", "axis_seq"], [f"{seg}_sum"], keepdims=0),
            helper.make_node("ReduceSum", [f"{seg}_mask", "axis_seq"], [f"{seg}_count0"], keepdims=1),
            helper.make_node("Add", [f"{seg}_count0", "eps"], [f"{seg}_count"]),
            helper.make_node("Div", [f"{seg}_sum", f"{seg}_count"], [f"{seg}_mean"]),
        ]
    nodes += [
        helper.make_node("Mul", ["q_mean", "p_mean"], ["qp"]),
        helper.make_node("ReduceSum", ["qp", "axis_seq"], ["dot"], keepdims=1),
        helper.make_node("Mul", ["dot", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "bias"], ["logits"]),
    ]
    ints = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        [ints("input_ids"), ints("attention_mask"), ints("token_type_ids")],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            numpy_helper.from_array(table, "table"),
            const("axis_last", [-1], np.int64),
            const("axis_seq", [1], np.int64),
            const("eps", 1e-6),
            const("scale", SCALE),
            const("bias", BIAS),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="engine-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    tmp = os.path.join(out, "model.onnx.part")
    onnx.save(model, tmp)
    os.replace(tmp, os.path.join(out, "model.onnx"))
    for name in ["tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"]:
        shutil.copyfile(os.path.join(models, name), os.path.join(out, name))
    print(f"make-test-reranker: wrote {out}/model.onnx ({os.path.getsize(os.path.join(out, 'model.onnx'))} bytes)")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "models"))
