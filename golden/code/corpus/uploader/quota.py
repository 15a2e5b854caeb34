"""Storage quota: reserved at upload start so parallel uploads cannot overshoot it."""
from __future__ import annotations


class QuotaExceeded(Exception):
    pass


def reserve_quota(db, user_id: str, size: int) -> None:
    """Atomically reserves `size` bytes; one UPDATE so Postgres serialises concurrent uploads."""
    row = db.execute(
        "UPDATE quotas SET reserved = reserved + %s WHERE user_id = %s AND used + reserved + %s <= quota RETURNING quota - used - reserved",
        (size, user_id, size),
    ).fetchone()
    if row is None:
        raise QuotaExceeded(f"upload of {size} bytes exceeds the storage quota of user {user_id}")


def release_reservation(db, user_id: str, size: int) -> None:
    """Gives back a reservation when an upload is abandoned or fails."""
    db.execute("UPDATE quotas SET reserved = greatest(reserved - %s, 0) WHERE user_id = %s", (size, user_id))


def commit_upload(db, user_id: str, size: int) -> None:
    """Turns a reservation into used storage once the upload completed."""
    db.execute("UPDATE quotas SET reserved = reserved - %s, used = used + %s WHERE user_id = %s", (size, size, user_id))


def remaining_bytes(db, user_id: str) -> int:
    row = db.execute("SELECT quota - used - reserved FROM quotas WHERE user_id = %s", (user_id,)).fetchone()
    return max(row[0], 0) if row else 0
