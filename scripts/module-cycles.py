#!/usr/bin/env python3
"""Prints the library's module graph and exits 1 when modules depend on each other in a cycle,
directly or through others, naming the edges.

    python3 scripts/module-cycles.py [--graph]

Checked at every level of the tree: the top-level modules of engine/ among themselves, and the
children of each folder module among themselves (`integrations::hook` and `integrations::daemon`,
`memory::capture` and `memory::store`…). A module includes everything below it. A folder's own
`mod.rs` is not one of its children: a child using what its parent declares is how Rust folders
are built. Test code and comments are not dependencies.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine")
# The crate roots: lib.rs declares everything, main.rs only calls the cli.
SKIP = {"lib.rs", "main.rs"}


def module_files():
    """Every module file with its path (`search::fuse`); a folder's mod.rs is the folder's module."""
    out = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
            if rel in SKIP:
                continue
            parts = rel[:-3].split(os.sep)
            if parts[-1] == "mod":
                parts = parts[:-1]
            out["::".join(parts)] = os.path.join(dirpath, f)
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
    for path, names in re.findall(r"pub use ([\w:]+)::(\{[^}]*\}|\w+);", lib):
        for name in re.findall(r"\w+", names):
            out[name] = path
    return out


def deepest(path, modules):
    """The longest prefix of a `a::b::c` path that is a module."""
    parts = path.split("::")
    for n in range(len(parts), 0, -1):
        candidate = "::".join(parts[:n])
        if candidate in modules:
            return candidate
    return None


def references(module, text, modules, reexported):
    """The modules a module's code names: `crate::…` paths (with `{…}` groups), `super::…`
    paths, and names the crate root re-exports."""
    found = set()
    paths = []
    for head, group in re.findall(r"\b(crate|super(?:::super)*)::((?:\w+::)*\{[^}]*\}|[\w:]+)", text, re.S):
        base = [] if head == "crate" else module.split("::")[: -head.count("super")]
        if group.endswith("}"):
            prefix, inner = group.split("{", 1)
            for item in re.split(r",", inner.rstrip("}")):
                item = item.strip().split(" as ")[0].strip()
                if item:
                    paths.append(base + [p for p in (prefix + item).split("::") if p and p != "self"])
        else:
            paths.append(base + [p for p in group.split("::") if p])
    for parts in paths:
        if len(parts) >= 1 and parts[-1] in reexported and parts[:-1] == []:
            parts = reexported[parts[-1]].split("::")
        target = deepest("::".join(parts), modules)
        if target:
            found.add(target)
    return found


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
    files = module_files()
    modules = set(files)
    reexported = reexports()
    uses = {m: references(m, code_of(open(f, encoding="utf-8").read()), modules, reexported) for m, f in files.items()}
    found = []
    parents = {""} | {m.rsplit("::", 1)[0] for m in modules if "::" in m}
    for parent in sorted(parents):
        children = sorted(m for m in modules if (m.rsplit("::", 1)[0] if "::" in m else "") == parent)
        if len(children) < 2:
            continue

        def child_of(target):
            for c in children:
                if target == c or target.startswith(c + "::"):
                    return c
            return None

        graph = {c: set() for c in children}
        for m, targets in uses.items():
            source = child_of(m)
            if source is None:
                continue
            for t in targets:
                dest = child_of(t)
                if dest is not None and dest != source:
                    graph[source].add(dest)
        if "--graph" in sys.argv:
            print(f"[{parent or 'engine'}]")
            for name in children:
                shown = lambda n: n.rsplit("::", 1)[-1]
                print(f"  {shown(name)} -> {', '.join(shown(d) for d in sorted(graph[name])) or '(nothing)'}")
        for component in cycles(graph):
            edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
            found.append(f"cycle: {', '.join(component)} ({'; '.join(edges)})")
    for line in found:
        print(line)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
