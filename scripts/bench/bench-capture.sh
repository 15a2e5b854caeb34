#!/usr/bin/env bash
# Memory capture speed: the whole `engine hook` process on a SessionEnd event for each shared
# transcript (3 MB each for the long ones), first into an empty project (writes every record), then
# again (nothing new). Prints the median of 5 runs of each, in milliseconds, with the file size.
#   scripts/bench/bench-capture.sh [TRANSCRIPTS_DIR]   (default: ENGINE_TRANSCRIPTS, else ../shared/transcripts)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dir="${1:-${ENGINE_TRANSCRIPTS:-../shared/transcripts}}"
cargo build --release --quiet
exe="$(pwd)/${CARGO_TARGET_DIR:-target}/release/engine"
exec python3 - "$exe" "$dir" <<'PY'
import json, os, shutil, statistics, subprocess, sys, tempfile, time

exe, dir = sys.argv[1], sys.argv[2]
for name in sorted(f for f in os.listdir(dir) if f.endswith(".jsonl")):
    path = os.path.join(dir, name)
    first, again, written = [], [], 0
    for _ in range(5):
        project = tempfile.mkdtemp()
        open(os.path.join(project, "engine.toml"), "w").close()
        event = json.dumps({"hook_event_name": "SessionEnd", "cwd": project, "session_id": name,
                            "transcript_path": path, "reason": "logout"}).encode()
        for times in (first, again):
            t = time.perf_counter()
            subprocess.run([exe, "hook"], input=event, capture_output=True, check=True)
            times.append((time.perf_counter() - t) * 1000)
        written = len(os.listdir(os.path.join(project, ".claude", "memory")))
        shutil.rmtree(project)
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB, {written} records; capture "
          f"{statistics.median(first):.0f} ms, again (nothing new) {statistics.median(again):.0f} ms")
PY
