#!/usr/bin/env bash
# Makes a Python virtualenv holding the real Shoal programs from PyPI, for the compatibility tests
# (test/discovery/shoal-*.test.ts) and prints its directory (scripts/ensure-venv.sh does the work).
#
# Versions are pinned to what docs/DISCOVERY.md says was checked. shoal-server is not installed:
# every release on PyPI (latest 0.7.6) is Python 2 code whose setup.py cannot run under Python 3.
# netifaces (a dependency of both) has no wheel for current Pythons, so pip builds it: that needs
# gcc and the Python headers (python3-dev), listed in .ci/apt-packages.txt with python3-venv.
set -euo pipefail
exec bash "$(dirname "$0")/ensure-venv.sh" shoal shoal-client==1.0.4 shoal-agent==1.0.2
