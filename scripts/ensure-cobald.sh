#!/usr/bin/env bash
# Makes a Python virtualenv holding COBalD from PyPI, so the coordinator's Linear and
# RelativeSupply controllers can be checked against the real ones on the same inputs
# (test/coordinator/cobald-parity.test.ts), and prints its directory.
set -euo pipefail
exec bash "$(dirname "$0")/ensure-venv.sh" cobald 'cobald==0.14.0'
