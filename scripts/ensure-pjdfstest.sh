#!/usr/bin/env bash
# Usage: ensure-pjdfstest.sh [--path]
# Builds (once) pjdfstest, the POSIX filesystem test suite the mount's regression tests run
# (test/fuse/pjdfstest.ts), from crates.io into a cache directory outside the repository, and
# prints the binary's path. With --path it only prints where the binary is (or would be) and
# builds nothing: the tests use that to decide whether it is there. Test files and CI may call it
# at once: one builds under a lock, the others wait and reuse it.
#
# crates.io carries the suite's Rust rewrite (the C original is packaged nowhere this project's
# machines reach); `--locked` builds it with the dependency versions its own Cargo.lock pins. It
# needs cargo (Rust >= 1.85). A cold build took 2 min 45 s on 2 cores under a load
# average of 10 (45 s of CPU), 13 min under a load of 30; later runs reuse the binary.
set -euo pipefail
PJDFSTEST_VERSION=0.2.0
dir="${ESTUARY_PJDFSTEST_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/estuary/pjdfstest-$PJDFSTEST_VERSION}"
bin="$dir/bin/pjdfstest"
# shellcheck source=scripts/cached-build.sh
. "$(dirname "$0")/cached-build.sh"
cached_build_begin "$dir" "$bin" "${1:-}"
cached_build_need cargo "$HOME/.cargo/bin" "install Rust 1.85 or newer (https://rustup.rs) to build pjdfstest"
cargo install pjdfstest --version "$PJDFSTEST_VERSION" --locked --root "$dir.tmp" --target-dir "$dir.build" >&2 ||
  cached_build_fail "$dir" "cargo install pjdfstest@$PJDFSTEST_VERSION failed (crates.io unreachable or Rust older than 1.85)"
rm -rf "$dir.build"
cached_build_finish "$dir" "$bin" "pjdfstest $PJDFSTEST_VERSION"
