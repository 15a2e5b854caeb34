"""Lookups over an ONNX graph, shared by the scripts that rewrite the embedding model
(derive-embedder.py, build-embedder.py)."""


def index(graph):
    """The graph's initializers by name, the node producing each tensor, and the nodes reading it."""
    inits = {t.name: t for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    readers = {}
    for n in graph.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    return inits, producer, readers
