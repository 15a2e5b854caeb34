#!/usr/bin/env python3
"""Counts the library's public items: what a crate user can name, as rustdoc documents it.

    python3 scripts/public-items.py [--list]

Runs `cargo doc --no-deps` (default features: the library and its `cli` module) and reads the
generated pages, so every way an item becomes public counts: `pub` items of public modules,
re-exports from private modules, and items a macro generates. Counted: modules, structs, enums,
traits, functions, constants, statics, type aliases, macros, struct fields and inherent methods,
as the earlier count of `pub` declarations did; enum variants and trait methods are printed but
not in the total.
Items behind the `internals` feature (this repository's tests and benches) are not documented
without it, so they do not count. Prints a line per kind and the total; `--list` names each item.
"""
import os
import re
import subprocess
import sys

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
subprocess.run(["cargo", "doc", "--no-deps", "--quiet"], cwd=root, check=True)
doc = os.path.join(target, "doc", "engine")

KINDS = {"struct": "struct", "enum": "enum", "trait": "trait", "fn": "fn", "constant": "const/static",
         "static": "const/static", "type": "type", "macro": "macro", "union": "struct"}
counts = {k: 0 for k in ["module", "struct", "enum", "trait", "fn", "const/static", "type", "macro",
                         "field", "method"]}
variants = 0
trait_methods = 0
names = []

with open(os.path.join(doc, "all.html"), encoding="utf-8") as f:
    items = sorted(set(re.findall(r'href="((?:[a-z_]+/)*(' + "|".join(KINDS) + r')\.(\w+)\.html)"', f.read())))

modules = {"engine"}
for href, kind, name in items:
    path = href.split("/")[:-1]
    for i in range(1, len(path) + 1):
        modules.add("engine::" + "::".join(path[:i]))
    counts[KINDS[kind]] += 1
    full = "::".join(["engine"] + path + [name])
    names.append(f"{kind} {full}")
    with open(os.path.join(doc, href), encoding="utf-8") as f:
        page = f.read()
    fields = re.findall(r'id="structfield\.(\w+)"', page)
    counts["field"] += len(fields)
    names.extend(f"field {full}.{x}" for x in fields)
    variants += len(re.findall(r'id="variant\.\w+"', page))
    if kind == "trait":
        methods = re.findall(r'id="(?:ty)?method\.(\w+)"', page.split('id="implementors"')[0])
        trait_methods += len(methods)
        names.extend(f"trait method {full}::{m}" for m in methods)
        continue
    # Inherent methods: the "Implementations" section, before the trait implementations.
    inherent = re.search(r'id="implementations-list"(.*?)(?:id="trait-implementations"|id="synthetic-implementations"|id="blanket-implementations"|$)', page, re.S)
    if inherent:
        methods = re.findall(r'id="method\.(\w+)"', inherent.group(1))
        counts["method"] += len(methods)
        names.extend(f"method {full}::{m}" for m in methods)
counts["module"] = len(modules)
names.extend(f"module {m}" for m in sorted(modules))

if "--list" in sys.argv:
    print("\n".join(sorted(names)))
for kind, n in counts.items():
    print(f"{kind:13} {n}")
print(f"{'total':13} {sum(counts.values())}")
print(f"({variants} enum variants and {trait_methods} trait methods, not counted)")
