#!/usr/bin/env bash
# Makes a Python virtualenv holding the real Shoal programs from PyPI, for the compatibility tests
# (test/discovery/shoal-*.test.ts) and prints its directory. Idempotent: an existing venv with the
# same versions is reused, so only the first run downloads (about 10 s).
#
# Versions are pinned to what docs/DISCOVERY.md says was checked. shoal-server is not installed:
# every release on PyPI (latest 0.7.6) is Python 2 code whose setup.py cannot run under Python 3.
# netifaces (a dependency of both) has no wheel for current Pythons, so pip builds it: that needs
# gcc and the Python headers (python3-dev), listed in .ci/apt-packages.txt with python3-venv.
set -euo pipefail
SHOAL_CLIENT=1.0.4
SHOAL_AGENT=1.0.2
want="shoal-client==$SHOAL_CLIENT shoal-agent==$SHOAL_AGENT"
venv="${ESTUARY_SHOAL_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/estuary/shoal-venv}"
# Debian's interpreter first: it is what CI installs python3-venv for.
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
mkdir -p "$(dirname "$venv")"
# Test files run in parallel and each calls this: one builds, the others wait and reuse.
exec 9>"$venv.lock"
flock 9
if [ -x "$venv/bin/shoal-client" ] && [ "$(cat "$venv/.estuary-shoal" 2>/dev/null)" = "$want" ]; then
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
  echo "pip could not install $want (PyPI unreachable, or gcc/python3-dev missing for netifaces)" >&2
  exit 1
fi
echo "$want" >"$venv/.estuary-shoal"
echo "$venv"
