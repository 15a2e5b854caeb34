#!/usr/bin/env python3
"""Counts the library's public items: what a crate user can name.

    python3 scripts/public-items.py [ROOT]      (ROOT: a checkout, default this one)

Walks the module tree from engine/lib.rs, following only `pub mod` (a private or `pub(crate)`
module hides everything inside it), and counts in each public module the items declared `pub`
(not `pub(crate)`/`pub(super)`): functions (free and in impl blocks), structs, enums, traits,
constants and statics, type aliases, macros exported with `#[macro_export]`, struct fields, and
names re-exported with `pub use` (items of private modules are reachable only that way).
`#[cfg(test)]` modules are private and so skipped. Prints a line per kind and the total.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
src = os.path.join(root, "engine")

KINDS = {
    "fn": re.compile(r"^\s*pub (const )?(unsafe )?fn \w+"),
    "struct": re.compile(r"^\s*pub struct \w+"),
    "enum": re.compile(r"^\s*pub enum \w+"),
    "trait": re.compile(r"^\s*pub trait \w+"),
    "const/static": re.compile(r"^\s*pub (const|static) [A-Z_0-9]+\s*:"),
    "type": re.compile(r"^\s*pub type \w+"),
    "field": re.compile(r"^\s*pub [a-z_][a-z_0-9]*\s*:"),
    "module": re.compile(r"^\s*pub mod \w+"),
}
counts = {k: 0 for k in KINDS}
per_module = {}


def module_file(directory, name):
    for candidate in (os.path.join(directory, f"{name}.rs"), os.path.join(directory, name, "mod.rs")):
        if os.path.isfile(candidate):
            return candidate
    return None


def strip_test_modules(lines):
    """Drops `#[cfg(test)] mod … { … }` blocks (brace counting is enough for this code base)."""
    out, skipping, depth, armed = [], False, 0, False
    for line in lines:
        if not skipping and line.strip() == "#[cfg(test)]":
            armed = True
            continue
        if armed and re.match(r"^\s*(pub(\(crate\))? )?mod \w+\s*\{", line):
            skipping, depth, armed = True, 0, False
        armed = False if not skipping else armed
        if skipping:
            depth += line.count("{") - line.count("}")
            if depth <= 0 and "}" in line:
                skipping = False
            continue
        out.append(line)
    return out


def walk(path, name):
    with open(path, encoding="utf-8") as f:
        lines = strip_test_modules(f.read().splitlines())
    here = 0
    directory = os.path.dirname(path) if os.path.basename(path) in ("mod.rs", "lib.rs") else path[:-3]
    for i, line in enumerate(lines):
        m = re.match(r"^\s*pub mod (\w+)\s*;", line)
        if m:
            counts["module"] += 1
            child = module_file(directory, m.group(1))
            if child:
                walk(child, f"{name}::{m.group(1)}")
            continue
        if re.match(r"^\s*pub mod (\w+)\s*\{", line):
            counts["module"] += 1  # an inline public module: its items are counted below
            continue
        for kind, pattern in KINDS.items():
            if kind != "module" and pattern.match(line):
                counts[kind] += 1
                here += 1
                break
        m = re.match(r"^\s*pub use [\w:]+::(\{[^}]*\}|\w+);", line)
        if m:
            # Re-exports (from private modules, which are not walked): each name counts once.
            counts.setdefault("re-export", 0)
            counts["re-export"] += len([n for n in m.group(1).strip("{}").split(",") if n.strip()])
        if line.strip() == "#[macro_export]":
            counts.setdefault("macro", 0)
            counts["macro"] += 1
            here += 1
    per_module[name] = here


walk(os.path.join(src, "lib.rs"), "engine")
for kind, n in counts.items():
    print(f"{kind:13} {n}")
print(f"{'total':13} {sum(counts.values())}")
if "--modules" in sys.argv:
    for name, n in sorted(per_module.items()):
        print(f"  {name} {n}")
