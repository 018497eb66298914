#!/usr/bin/env bash
# Swift with the S3 API in the foreground, for humans and benchmarks: stores in DIR (created if
# needed, objects kept across runs), prints the endpoint, stops everything on Ctrl-C or SIGTERM.
#   scripts/swift/run.sh DIR [--port 8080] [--host IP] [--workers N] [--bucket NAME]...
set -euo pipefail
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: $0 DIR [--port N] [--host IP] [--workers N] [--bucket NAME]... [--log-level LEVEL]" >&2
  exit 2
fi
# exec: the launcher gets the signals itself and stops its servers.
exec /usr/bin/python3 "$(dirname "$0")/aio.py" run "$@"
