#!/usr/bin/env bash
# Installs the Debian packages for Swift with s3api without letting them start daemons.
#
# Package postinst scripts start their services through invoke-rc.d, which asks
# /usr/sbin/policy-rc.d first. Container images usually ship one that says no (exit 101); a
# machine without it and without systemd would get memcached on 127.0.0.1:11211 and the Swift
# account, container and object servers on 0.0.0.0:6200-6202 from /etc/swift. estuary never uses
# those (scripts/swift/aio.py runs its own on free loopback ports), so this script denies the
# start for the duration of the install, and stops, through their init scripts (pid files), any
# that an earlier install did start.
set -euo pipefail
PACKAGES=(swift swift-proxy swift-object swift-container swift-account memcached)
POLICY=/usr/sbin/policy-rc.d

if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\n# estuary scripts/swift/apt-install.sh: no daemons during this install\nexit 101\n' >"$POLICY"
  chmod 755 "$POLICY"
  trap 'rm -f "$POLICY"' EXIT
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  [ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -print -quit 2>/dev/null)" ] || apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

for service in memcached swift-proxy swift-account swift-container swift-object; do
  script=/etc/init.d/$service
  if [ -x "$script" ] && "$script" status >/dev/null 2>&1; then
    echo "stopping the system $service that a package install started (estuary runs its own)"
    "$script" stop || true
  fi
done
echo "Swift packages installed: /usr/bin/python3 $(dirname "$0")/aio.py check /tmp"
