#!/usr/bin/env python3
"""Prints the library's module graph (top-level modules of engine/, test code excluded) and exits 1
when two modules depend on each other, directly or through others.

    python3 scripts/module-cycles.py [--graph]
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine")
# The crate roots, and the binary's own module (it uses the library by its name, `engine::`).
SKIP = {"lib", "main", "cli"}


def modules():
    out = {}
    for entry in sorted(os.listdir(ROOT)):
        path = os.path.join(ROOT, entry)
        if entry.endswith(".rs") and entry[:-3] not in SKIP:
            out[entry[:-3]] = [path]
        elif os.path.isdir(path):
            out[entry] = [os.path.join(dp, f) for dp, _, fs in os.walk(path) for f in fs if f.endswith(".rs")]
    return out


def code_of(text):
    """The non-test code: a `#[cfg(test)]` module runs to the end of its file in this code base
    (a test-only item elsewhere is a line or two and is kept); comments (doc links included) are
    not dependencies."""
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([a-z]+\))? )?mod ", text)
    text = text if m is None else text[: m.start()]
    return re.sub(r"//[^\n]*", "", text)


def reexports():
    """Names the crate root re-exports (`pub use search::{Engine, …};`), by the module they come
    from: `crate::Engine` depends on `search` as much as `crate::search::Engine` does."""
    with open(os.path.join(ROOT, "lib.rs"), encoding="utf-8") as f:
        lib = f.read()
    out = {}
    for module, names in re.findall(r"pub use (\w+)::(\{[^}]*\}|\w+);", lib):
        for name in re.findall(r"\w+", names):
            out[name] = module
    return out


REEXPORTS = reexports()


def references(text, names):
    found = set(re.findall(r"\bcrate::([a-z_]+)", text))
    for group in re.findall(r"\bcrate::\{([^}]*)\}", text, re.S):
        found |= set(re.findall(r"(?:^|,)\s*([a-z_]+)", group))
        found |= {REEXPORTS[n] for n in re.findall(r"\b([A-Z]\w*)", group) if n in REEXPORTS}
    found |= {REEXPORTS[n] for n in re.findall(r"\bcrate::([A-Z]\w*)", text) if n in REEXPORTS}
    return found & names


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    mods = modules()
    names = set(mods)
    graph = {}
    for name, files in mods.items():
        text = "".join(code_of(open(f).read()) for f in files)
        graph[name] = references(text, names) - {name}
    if "--graph" in sys.argv:
        for name in sorted(graph):
            print(f"{name} -> {', '.join(sorted(graph[name])) or '(nothing)'}")
    found = cycles(graph)
    for component in found:
        edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
        print(f"cycle: {', '.join(component)} ({'; '.join(edges)})")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
