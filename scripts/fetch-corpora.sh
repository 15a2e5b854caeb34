#!/usr/bin/env bash
# Installs every corpus listed in golden/corpora.toml into the corpora cache ($ENGINE_CORPORA_DIR,
# else $XDG_CACHE_HOME/engine/corpora, else ~/.cache/engine/corpora), from the registry each entry
# names, verifying the archive's sha256 before unpacking. Idempotent: a corpus already unpacked from
# the pinned archive is left alone, so a second run does no network work.
#
#   scripts/fetch-corpora.sh            # fetch what is missing
#   scripts/fetch-corpora.sh --check    # verify only; exit 1 naming what is missing
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
manifest="$root/golden/corpora.toml"
dest="${ENGINE_CORPORA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/engine/corpora}"
python="${PYTHON:-python3}"
command -v "$python" >/dev/null || { echo "fetch-corpora: python3 (3.11+) is needed to read $manifest" >&2; exit 1; }
exec "$python" - "$manifest" "$dest" "$@" <<'PY'
import hashlib, os, shutil, subprocess, sys, tarfile, tempfile, tomllib, urllib.request

manifest_path, dest = sys.argv[1], sys.argv[2]
check_only = "--check" in sys.argv[3:]
with open(manifest_path, "rb") as f:
    manifest = tomllib.load(f)
os.makedirs(dest, exist_ok=True)

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()

def stamp(name):
    # Records which archive a corpus was unpacked from: a new pin in the manifest refetches it.
    return os.path.join(dest, f".{name}.sha256")

def present(name, entry):
    try:
        with open(stamp(name)) as f:
            return f.read().strip() == entry["sha256"] and os.path.isdir(os.path.join(dest, name))
    except FileNotFoundError:
        return False

def download(entry, into):
    """The archive, by the registry's own client, into the directory `into`."""
    pkg, ver, registry = entry["package"], entry["version"], entry["registry"]
    quiet = dict(check=True, stdout=subprocess.DEVNULL)
    if registry == "pypi":
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary=:all:",
                        "-d", into, f"{pkg}=={ver}"], **quiet)
    elif registry == "npm":
        subprocess.run(["npm", "pack", f"{pkg}@{ver}", "--pack-destination", into, "--silent"], **quiet)
    elif registry == "crates":
        # The download endpoint cargo itself fetches crates from.
        url = f"https://static.crates.io/crates/{pkg}/{pkg}-{ver}.crate"
        with urllib.request.urlopen(url, timeout=120) as r, open(os.path.join(into, entry["file"]), "wb") as f:
            shutil.copyfileobj(r, f)
    else:
        sys.exit(f"fetch-corpora: unknown registry {registry!r} for {pkg}")
    path = os.path.join(into, entry["file"])
    if not os.path.isfile(path):
        sys.exit(f"fetch-corpora: {registry} gave no {entry['file']} for {pkg} {ver}")
    return path

def unpack(name, entry, archive):
    got = sha256(archive)
    if got != entry["sha256"]:
        sys.exit(f"fetch-corpora: sha256 mismatch for {entry['file']}: expected {entry['sha256']}, got {got}")
    with tempfile.TemporaryDirectory(dir=dest) as out:
        with tarfile.open(archive) as t:
            t.extractall(out, filter="data")
        src = os.path.join(out, entry["root"])
        if not os.path.isdir(src):
            sys.exit(f"fetch-corpora: {entry['file']} has no {entry['root']}/")
        target = os.path.join(dest, name)
        old = target + ".old"
        if os.path.exists(target):
            os.replace(target, old)
        os.replace(src, target)
        shutil.rmtree(old, ignore_errors=True)
    with open(stamp(name), "w") as f:
        f.write(entry["sha256"] + "\n")
    print(f"fetch-corpora: {name} {entry['version']} unpacked into {os.path.join(dest, name)} (sha256 ok)")

missing = [n for n, e in manifest.items() if not present(n, e)]
if check_only:
    if missing:
        sys.exit(f"fetch-corpora: missing or outdated in {dest}: {', '.join(missing)}")
    print(f"fetch-corpora: all corpora present in {dest}")
    sys.exit(0)
for name in missing:
    with tempfile.TemporaryDirectory() as tmp:
        unpack(name, manifest[name], download(manifest[name], tmp))
if not missing:
    print(f"fetch-corpora: all corpora present in {dest}")
PY
