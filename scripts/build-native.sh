#!/usr/bin/env bash
# Builds the gateway's addon in lib/native (mapped-file.c: read-only file mappings, N-API), run by
# npm's postinstall. Without it the gateway works, but reads every disk hit into the worker
# instead of writing it from the page cache, at more CPU per hit; it says so at start, on its
# status page and in estuary_gateway_disk_mapping_unavailable.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node-gyp.sh
log=/tmp/estuary-native-build.log
if ! gyp_rebuild lib/native "$log"; then
  echo "estuary: could not build lib/native (log: $log); the gateway will read disk hits instead of" \
    "mapping them, at more CPU per hit. Install python3, make and g++, then run npm rebuild." >&2
fi
