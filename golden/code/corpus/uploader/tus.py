"""tus resumable upload endpoints: create, HEAD for the current offset, PATCH to append a part.

Offsets live in Redis per upload id so any worker can resume an upload.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .quota import QuotaExceeded, reserve_quota
from .storage import Storage

PART_SIZE = 8 * 1024 * 1024
TUS_VERSION = "1.0.0"


@dataclass
class Upload:
    upload_id: str
    user_id: str
    size: int
    offset: int
    s3_upload_id: str
    parts: list[str]


class TusError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def check_tus_headers(headers: dict[str, str]) -> None:
    """Every tus request must say which protocol version it speaks."""
    if headers.get("Tus-Resumable") != TUS_VERSION:
        raise TusError(412, "Tus-Resumable: 1.0.0 header required")


def create_upload(redis, storage: Storage, db, user_id: str, size: int, filename: str) -> Upload:
    """Reserves quota for the declared size and starts an S3 multipart upload."""
    try:
        reserve_quota(db, user_id, size)
    except QuotaExceeded as e:
        raise TusError(413, str(e)) from e
    upload_id = "u-" + hashlib.sha256(f"{user_id}:{filename}:{size}".encode()).hexdigest()[:20]
    s3_id = storage.start_multipart(upload_id)
    upload = Upload(upload_id, user_id, size, 0, s3_id, [])
    save_upload(redis, upload)
    return upload


def upload_offset(redis, upload_id: str) -> int:
    """The HEAD answer: how many bytes the server has, so the client resumes from there."""
    upload = load_upload(redis, upload_id)
    return upload.offset


def append_part(redis, storage: Storage, upload_id: str, offset: int, body: bytes, content_md5: str) -> int:
    """Appends one part at the given offset; part boundaries are fixed so a retry sends the same bytes."""
    upload = load_upload(redis, upload_id)
    if offset != upload.offset:
        raise TusError(409, f"upload {upload_id}: offset {offset} does not match server offset {upload.offset}")
    if hashlib.md5(body).hexdigest() != content_md5:
        part = len(upload.parts) + 1
        raise TusError(460, f"part {part} of upload {upload_id}: checksum mismatch")
    etag = storage.upload_part(upload.s3_upload_id, len(upload.parts) + 1, body)
    upload.parts.append(etag)
    upload.offset += len(body)
    if upload.offset == upload.size:
        storage.complete_multipart(upload.s3_upload_id, upload.parts)
    save_upload(redis, upload)
    return upload.offset


def save_upload(redis, upload: Upload) -> None:
    redis.hset(f"tus:{upload.upload_id}", mapping={"offset": upload.offset, "parts": ",".join(upload.parts)})


def load_upload(redis, upload_id: str) -> Upload:
    raw = redis.hgetall(f"tus:{upload_id}")
    if not raw:
        raise TusError(404, f"upload {upload_id} not found or expired")
    return Upload(upload_id, raw["user_id"], int(raw["size"]), int(raw["offset"]), raw["s3_upload_id"], raw["parts"].split(",") if raw["parts"] else [])
