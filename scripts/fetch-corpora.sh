#!/usr/bin/env bash
# Installs every corpus listed in golden/corpora.toml into the corpora cache ($ENGINE_CORPORA_DIR,
# else $XDG_CACHE_HOME/engine/corpora, else ~/.cache/engine/corpora), from the registry each entry
# names, verifying the archive's sha256 before unpacking. Idempotent: a corpus already unpacked from
# the pinned archive is left alone, so a second run does no network work.
#
# registry = "debian" entries are upstream tarballs (`<source>_<version>.orig.tar.*`) of Debian
# source packages in bookworm main, fetched with apt itself: a throw-away sources list (one deb-src
# line on the mirror this machine's own apt sources name), lists and cache under a temporary
# directory, `apt-get source --print-uris` to find the file, apt-helper (apt's downloader) to fetch
# it. Nothing under /etc or /var is changed.
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
import glob, hashlib, os, re, shutil, subprocess, sys, tarfile, tempfile, tomllib, urllib.request

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

DEBIAN_SUITE = "bookworm"  # the suite every registry = "debian" pin was taken from (component main)

def debian_mirror():
    """(URI, signed-by or None) of the Debian archive this machine's apt already uses."""
    entries = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        with open(path) as f:
            for stanza in re.split(r"\n\s*\n", f.read()):
                fields = {}
                for line in stanza.splitlines():
                    if line.startswith("#") or ":" not in line or line[:1].isspace():
                        continue
                    key, _, value = line.partition(":")
                    fields[key.strip().lower()] = value.strip()
                if fields.get("enabled", "yes").lower() == "no":
                    continue
                for uri in fields.get("uris", "").split():
                    entries.append((uri, fields.get("suites", "").split(),
                                    fields.get("components", "").split(), fields.get("signed-by")))
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        try:
            lines = open(path).read().splitlines()
        except FileNotFoundError:
            continue
        for line in lines:
            m = re.match(r"\s*deb(?:-src)?\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)", line)
            if m:
                opts = dict(o.split("=", 1) for o in (m.group(1) or "").split() if "=" in o)
                entries.append((m.group(2), [m.group(3)], m.group(4).split(), opts.get("signed-by")))
    for uri, suites, components, signed_by in entries:
        # The main archive: a release suite (no -security/-updates) with component main.
        if "main" in components and any("-" not in s and "/" not in s for s in suites):
            # Signed-By may also be an inline key block; only a keyring path is passed on.
            return uri.rstrip("/"), signed_by if signed_by and signed_by.startswith("/") else None
    sys.exit("fetch-corpora: no Debian archive in this machine's apt sources (/etc/apt); "
             "registry = \"debian\" needs one")

def debian_download(entry, into):
    """The pinned file of a Debian source package, by apt's own client, into `into`."""
    uri, signed_by = debian_mirror()
    state = os.path.join(into, "apt")
    for d in ("lists/partial", "cache/archives/partial", "work"):
        os.makedirs(os.path.join(state, d))
    sources = os.path.join(state, "sources.list")
    opt = f"[signed-by={signed_by}] " if signed_by else ""
    with open(sources, "w") as f:
        f.write(f"deb-src {opt}{uri} {DEBIAN_SUITE} main\n")
    apt = ["apt-get", "-q", "-o", f"Dir::Etc::SourceList={sources}", "-o", "Dir::Etc::SourceParts=/dev/null",
           "-o", f"Dir::State::Lists={os.path.join(state, 'lists')}",
           "-o", f"Dir::Cache={os.path.join(state, 'cache')}"]
    if os.geteuid() == 0:
        apt += ["-o", "APT::Sandbox::User=root"]  # the temporary directory is not _apt's
    subprocess.run(apt + ["update"], check=True, stdout=subprocess.DEVNULL)
    # Lists what `apt-get source` would fetch ('URI' name size SHA256:hash), run in an empty directory
    # (apt leaves out files already present in the current one).
    work = os.path.join(state, "work")
    out = subprocess.run(apt + ["source", "--print-uris", entry["package"]], cwd=work, check=True,
                         capture_output=True, text=True).stdout
    files = {m.group(2): (m.group(1), m.group(4)) for m in
             re.finditer(r"^'(\S+)' (\S+) (\d+) (\S+)$", out, re.M)}
    if entry["file"] not in files:
        sys.exit(f"fetch-corpora: Debian {DEBIAN_SUITE} source package {entry['package']} no longer has "
                 f"{entry['file']} (it has {', '.join(sorted(files)) or 'nothing'})")
    url, digest = files[entry["file"]]
    if digest.lower() != f"sha256:{entry['sha256']}":
        sys.exit(f"fetch-corpora: Debian lists {entry['file']} with {digest}, not the pinned sha256 {entry['sha256']}")
    path = os.path.join(into, entry["file"])
    helper = "/usr/lib/apt/apt-helper"
    if os.access(helper, os.X_OK):
        cmd = [helper] + apt[2:] + ["download-file", url, path, digest]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    else:
        # No apt-helper: let apt-get source fetch the package's files and keep the pinned one.
        subprocess.run(apt + ["source", "--download-only", entry["package"]], cwd=work,
                       stdout=subprocess.DEVNULL)
        if os.path.isfile(os.path.join(work, entry["file"])):
            os.replace(os.path.join(work, entry["file"]), path)

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
    elif registry == "debian":
        debian_download(entry, into)
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
