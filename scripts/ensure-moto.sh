#!/usr/bin/env bash
# Makes a Python virtualenv holding moto's server (the EC2 emulator the AWS tooling world tests
# with) from PyPI, for the coordinator's ec2 site tests, and prints its directory.
set -euo pipefail
exec bash "$(dirname "$0")/ensure-venv.sh" moto 'moto[server]==5.2.5'
