# Sourced by the scripts that build addons at install time. gyp_rebuild DIR LOG builds the addon
# in DIR with the node-gyp that came with npm, against Node's headers where npm is told to find
# them (machines without internet set nodedir; else node-gyp's usual download); its output goes
# to LOG. Fails as node-gyp does.
gyp_rebuild() {
  local gyp nodedir
  gyp="${npm_config_node_gyp:-$(dirname "$(command -v npm)")/../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js}"
  nodedir="${npm_config_nodedir:-$(npm config get nodedir 2>/dev/null || true)}"
  case "$nodedir" in undefined | null) nodedir= ;; esac
  (cd "$1" && node "$gyp" rebuild ${nodedir:+--nodedir="$nodedir"} >"$2" 2>&1)
}
