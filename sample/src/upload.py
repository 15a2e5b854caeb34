"""Resumable uploads: parts are checksummed, stored, then assembled."""

import hashlib

PART_SIZE = 8 * 1024 * 1024


class UploadSession:
    """Tracks the parts of one resumable upload."""

    def __init__(self, upload_id, total_parts):
        self.upload_id = upload_id
        self.total_parts = total_parts
        self.parts = {}

    def add_part(self, number, data, checksum):
        """Stores one part after verifying its SHA-256 checksum."""
        if hashlib.sha256(data).hexdigest() != checksum:
            raise ValueError(f"part {number} of {self.upload_id}: checksum mismatch")
        self.parts[number] = data

    def is_complete(self):
        return len(self.parts) == self.total_parts


def retry_with_backoff(func, attempts=5, base_delay=2.0):
    """Calls func until it succeeds, doubling the delay after each failure."""
    import time

    for attempt in range(attempts):
        try:
            return func()
        except IOError:
            if attempt == attempts - 1:
                raise
            time.sleep(base_delay * (2 ** attempt))
