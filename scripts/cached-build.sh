# Sourced by the ensure-*.sh scripts that compile a program once per machine into a cache
# directory outside the repository (MinIO from the Go module proxy, pjdfstest from crates.io).
# The parts they share: `--path` prints where the binary is (or would be) and builds nothing;
# callers that start at once take turns under a lock, and the later ones reuse the first's build;
# a build goes into DIR.tmp and replaces DIR only when it succeeded.

# cached_build_begin DIR BIN [ARG]: exits printing BIN when ARG is --path or BIN is built; else
# returns holding the lock, with DIR.tmp empty and the build's start time in cached_build_started.
cached_build_begin() {
  local dir=$1 bin=$2
  if [ "${3:-}" = "--path" ]; then
    echo "$bin"
    exit 0
  fi
  mkdir -p "$(dirname "$dir")"
  exec 9>"$dir.lock"
  flock 9
  if [ -x "$bin" ]; then
    echo "$bin"
    exit 0
  fi
  rm -rf "$dir.tmp"
  cached_build_started=$SECONDS
}

# cached_build_need TOOL FALLBACK_DIR HINT: finds TOOL on PATH or in FALLBACK_DIR, else exits 1
# with HINT (what to install).
cached_build_need() {
  command -v "$1" >/dev/null && return 0
  PATH="$PATH:$2"
  command -v "$1" >/dev/null || { echo "$1 is missing: $3" >&2; exit 1; }
}

# cached_build_fail DIR MESSAGE: drops the half-built DIR.tmp and exits 1 with MESSAGE.
cached_build_fail() {
  rm -rf "$1.tmp"
  echo "$2" >&2
  exit 1
}

# cached_build_finish DIR BIN WHAT: puts the build in place and prints BIN.
cached_build_finish() {
  rm -rf "$1"
  mv "$1.tmp" "$1"
  echo "built $3 in $((SECONDS - cached_build_started)) s" >&2
  echo "$2"
}
