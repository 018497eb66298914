#!/usr/bin/env bash
# Usage: ensure-minio.sh [--path]
# Builds (once) the MinIO server the S3 tests run beside s3rver and Swift, from the Go module
# proxy, into a cache directory outside the repository, and prints the binary's path. With
# --path it only prints where the binary is (or would be) and builds nothing: the tests use that
# to decide whether MinIO is there. Test files and CI may call it at once: one builds under a
# lock, the others wait and reuse it.
#
# MinIO publishes no semantic-version tags, so the module proxy serves it as a pseudo-version of
# a commit; this one is the newest the proxy had when it was pinned. Its go.mod has no replace
# directives, so a plain `go install module@version` builds it. It needs Go >= 1.24 (Debian's
# golang-go is older; CI machines carry Go in /usr/local/go). A cold build downloads ~1.3 GB of
# modules into the Go module cache and takes minutes on 2 cores (docs/TESTING.md has the figures).
set -euo pipefail
MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
dir="${ESTUARY_MINIO_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/estuary/minio-$MINIO_VERSION}"
bin="$dir/minio"
# shellcheck source=scripts/cached-build.sh
. "$(dirname "$0")/cached-build.sh"
cached_build_begin "$dir" "$bin" "${1:-}"
cached_build_need go /usr/local/go/bin "install Go 1.24 or newer (https://go.dev/dl) to build MinIO"
mkdir -p "$dir.tmp"
# GOTOOLCHAIN=local: build with the Go that is here rather than fetching the one go.mod names.
GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOBIN="$dir.tmp" go install -trimpath "$MINIO_MODULE@$MINIO_VERSION" >&2 ||
  cached_build_fail "$dir" "go install $MINIO_MODULE@$MINIO_VERSION failed (module proxy unreachable, or Go older than 1.24)"
cached_build_finish "$dir" "$bin" "MinIO $MINIO_VERSION"
