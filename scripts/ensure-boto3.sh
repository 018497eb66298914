#!/usr/bin/env bash
# Makes a Python virtualenv holding boto3 (PyPI) for the S3 client-compatibility tests, which run
# it with its default settings through the gateway, and prints its directory.
set -euo pipefail
exec bash "$(dirname "$0")/ensure-venv.sh" s3-clients 'boto3==1.43.11'
