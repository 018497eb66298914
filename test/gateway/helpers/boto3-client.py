"""boto3 with its default settings (checksums WHEN_SUPPORTED), driven by the client tests.

Usage: boto3-client.py ENDPOINT BUCKET OP KEY [ARG]. Credentials come from AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. Prints one JSON line: {"ok": true, ...} or
{"ok": false, "code": ..., "message": ...}; exits 0 either way so the test sees the S3 answer.
"""
import hashlib
import json
import sys

import boto3
from botocore.config import Config
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import BotoCoreError, ClientError

MiB = 1024 * 1024

endpoint, bucket, op, key = sys.argv[1:5]
arg = sys.argv[5] if len(sys.argv) > 5 else None
s3 = boto3.client(
    "s3",
    endpoint_url=endpoint,
    region_name="us-east-1",
    config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
)
try:
    if op == "put-file":
        s3.upload_file(arg, bucket, key)
        out = {}
    elif op == "put-multipart":
        # The smallest part size S3 allows, so a 6 MiB file goes up in two parts.
        config = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
        s3.upload_file(arg, bucket, key, Config=config)
        out = {}
    elif op == "list":
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=key)
        counts = [len(p.get("Contents", [])) for p in pages]
        out = {"length": sum(counts), "pages": len(counts)}
    elif op == "get-range":
        r = s3.get_object(Bucket=bucket, Key=key, Range=arg, ChecksumMode="ENABLED")
        body = r["Body"].read()
        out = {"status": r["ResponseMetadata"]["HTTPStatusCode"], "md5": hashlib.md5(body).hexdigest(), "length": len(body)}
    elif op == "download":
        s3.download_file(bucket, key, arg)
        out = {}
    elif op == "delete":
        s3.delete_object(Bucket=bucket, Key=key)
        out = {}
    elif op == "head":
        r = s3.head_object(Bucket=bucket, Key=key)
        out = {"length": r["ContentLength"]}
    else:
        raise SystemExit(f"unknown op {op}")
    print(json.dumps({"ok": True, **out}))
except ClientError as e:
    err = e.response.get("Error", {})
    print(json.dumps({"ok": False, "code": err.get("Code"), "message": err.get("Message")}))
except BotoCoreError as e:
    print(json.dumps({"ok": False, "code": type(e).__name__, "message": str(e)}))
