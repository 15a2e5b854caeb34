"""Duplicate photo detection: a perceptual hash proposes candidates, SHA-256 confirms."""
from __future__ import annotations

import hashlib

from PIL import Image


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dhash(path: str, size: int = 8) -> int:
    """Difference hash: 64 bits comparing neighbouring pixels of a tiny greyscale copy."""
    img = Image.open(path).convert("L").resize((size + 1, size))
    px = list(img.getdata())
    bits = 0
    for row in range(size):
        for col in range(size):
            left = px[row * (size + 1) + col]
            right = px[row * (size + 1) + col + 1]
            bits = (bits << 1) | (left > right)
    return bits


def hamming(a: int, b: int) -> int:
    return bin(a ^ b).count("1")


def find_duplicates(db, user_id: str, path: str, max_distance: int = 4) -> list[str]:
    """Photo ids that are byte-identical to the file; near matches are only candidates."""
    candidates = db.execute("SELECT id, dhash, sha256 FROM photos WHERE owner_id = %s AND deleted_at IS NULL", (user_id,)).fetchall()
    digest = sha256_file(path)
    h = dhash(path)
    return [pid for pid, ph, sha in candidates if hamming(h, ph) <= max_distance and sha == digest]
