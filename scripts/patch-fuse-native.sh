#!/usr/bin/env bash
# fuse-native 2.2.6 hands utimens' access time to JavaScript twice (its C glue converts tv[0] for
# both arguments), so every mount would store the access time as the modification time set by
# cp -p, tar or rsync -t. This corrects that one line in the installed copy and rebuilds the addon
# (N-API, against the libfuse the package bundles). Idempotent; run by npm's postinstall.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=node_modules/fuse-native
src=$dir/fuse-native.c
[ -f "$src" ] || exit 0
if grep -q 'FUSE_UINT64_TO_INTS_ARGV(l->mtime, 5)' "$src" && [ -f "$dir/build/Release/fuse.node" ]; then
  exit 0
fi
sed -i 's/FUSE_UINT64_TO_INTS_ARGV(l->atime, 5)/FUSE_UINT64_TO_INTS_ARGV(l->mtime, 5)/' "$src"
gyp="${npm_config_node_gyp:-$(dirname "$(command -v npm)")/../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js}"
# Node's headers: where npm is told to find them (machines without internet set nodedir), else
# node-gyp's usual download.
nodedir="${npm_config_nodedir:-$(npm config get nodedir 2>/dev/null || true)}"
case "$nodedir" in undefined | null) nodedir= ;; esac
if ! (cd "$dir" && node "$gyp" rebuild ${nodedir:+--nodedir="$nodedir"} >/tmp/estuary-fuse-native-build.log 2>&1); then
  echo "estuary: could not rebuild fuse-native with the utimens fix (log: /tmp/estuary-fuse-native-build.log);" \
    "mounts will store access times as modification times. Install python3, make and g++, then run npm rebuild." >&2
fi
