#!/usr/bin/env bash
# Usage: ensure-venv.sh NAME REQUIREMENT...
# Makes (once) a Python virtualenv holding REQUIREMENTs from PyPI, for tests that run real Python
# programs (Shoal's client and agent, moto's EC2 server), and prints its directory. An existing
# venv with the same requirements is reused, so only the first run downloads. Test files run in
# parallel and each may call this: one builds under a lock, the others wait and reuse it.
set -euo pipefail
name="$1"
shift
want="$*"
upper="$(echo "$name" | tr 'a-z-' 'A-Z_')"
override="ESTUARY_${upper}_VENV"
venv="${!override:-${XDG_CACHE_HOME:-$HOME/.cache}/estuary/$name-venv}"
# Debian's interpreter first: it is what CI installs python3-venv for.
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if [ -d "$venv/bin" ] && [ "$(cat "$venv/.estuary-venv" 2>/dev/null)" = "$want" ]; then
  echo "$venv"
  exit 0
fi
rm -rf "$venv"
if ! "$py" -m venv "$venv" >&2; then
  echo "could not make a virtualenv with $py: apt-get install python3-venv" >&2
  exit 1
fi
# shellcheck disable=SC2086
if ! "$venv/bin/pip" install --quiet --disable-pip-version-check $want >&2; then
  echo "pip could not install $want (PyPI unreachable, or a build dependency missing)" >&2
  exit 1
fi
echo "$want" >"$venv/.estuary-venv"
echo "$venv"
