#!/usr/bin/env bash
# Builds the gateway's addons in lib/native (N-API), run by npm's postinstall: mapped-file.c
# (read-only file mappings) and socket-options.c (a TCP connection's round trip, its send buffer).
# Without them the gateway works, but reads every disk hit into the worker instead of writing it
# from the page cache, at more CPU per hit, and leaves every send buffer to the kernel
# (--send-buffer); it says so at start, and of the first on its status page and in
# estuary_gateway_disk_mapping_unavailable.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/node-gyp.sh
log=/tmp/estuary-native-build.log
if ! gyp_rebuild lib/native "$log"; then
  echo "estuary: could not build lib/native (log: $log); the gateway will read disk hits instead of" \
    "mapping them, at more CPU per hit, and leave send buffers to the kernel. Install python3, make" \
    "and g++, then run npm rebuild." >&2
fi
