"""The one S3 wrapper: MinIO on-prem, AWS S3 in the cloud. Bucket names come from config."""
from __future__ import annotations

import boto3
from botocore.config import Config

COPY_PART_SIZE = 8 * 1024 * 1024
SINGLE_COPY_LIMIT = 5 * 1024 * 1024 * 1024


class Storage:
    def __init__(self, endpoint: str, public_endpoint: str, bucket: str):
        # One client per process: a client per request leaked memory in the workers.
        cfg = Config(connect_timeout=2, read_timeout=10, retries={"max_attempts": 3, "mode": "standard"})
        self.client = boto3.client("s3", endpoint_url=endpoint, config=cfg)
        self.public = boto3.client("s3", endpoint_url=public_endpoint, config=cfg)
        self.bucket = bucket

    def start_multipart(self, key: str) -> str:
        return self.client.create_multipart_upload(Bucket=self.bucket, Key=key)["UploadId"]

    def upload_part(self, upload_id: str, number: int, body: bytes) -> str:
        return self.client.upload_part(Bucket=self.bucket, Key=upload_id, UploadId=upload_id, PartNumber=number, Body=body)["ETag"]

    def complete_multipart(self, upload_id: str, etags: list[str]) -> None:
        parts = [{"ETag": e, "PartNumber": i + 1} for i, e in enumerate(etags)]
        self.client.complete_multipart_upload(Bucket=self.bucket, Key=upload_id, UploadId=upload_id, MultipartUpload={"Parts": parts})

    def abort_abandoned_uploads(self, older_than_hours: int = 24) -> int:
        """Aborts multipart uploads nobody resumed; S3 would otherwise keep billing for the parts."""
        import datetime as dt

        cutoff = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=older_than_hours)
        aborted = 0
        for up in self.client.list_multipart_uploads(Bucket=self.bucket).get("Uploads", []):
            if up["Initiated"] < cutoff:
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=up["Key"], UploadId=up["UploadId"])
                aborted += 1
        return aborted

    def presigned_download_url(self, key: str, expires_seconds: int = 3600) -> str:
        """Signed with the public endpoint: URLs signed for minio:9000 do not work in browsers."""
        return self.public.generate_presigned_url("get_object", Params={"Bucket": self.bucket, "Key": key}, ExpiresIn=expires_seconds)

    def move(self, key: str, dest_bucket: str, size: int) -> None:
        """Moves an object between buckets; objects over 5 GB need a multipart copy."""
        if size <= SINGLE_COPY_LIMIT:
            self.client.copy_object(Bucket=dest_bucket, Key=key, CopySource={"Bucket": self.bucket, "Key": key})
        else:
            mp = self.client.create_multipart_upload(Bucket=dest_bucket, Key=key)["UploadId"]
            parts = []
            for i, start in enumerate(range(0, size, COPY_PART_SIZE)):
                end = min(start + COPY_PART_SIZE, size) - 1
                r = self.client.upload_part_copy(Bucket=dest_bucket, Key=key, UploadId=mp, PartNumber=i + 1, CopySource={"Bucket": self.bucket, "Key": key}, CopySourceRange=f"bytes={start}-{end}")
                parts.append({"ETag": r["CopyPartResult"]["ETag"], "PartNumber": i + 1})
            self.client.complete_multipart_upload(Bucket=dest_bucket, Key=key, UploadId=mp, MultipartUpload={"Parts": parts})
        self.client.delete_object(Bucket=self.bucket, Key=key)
