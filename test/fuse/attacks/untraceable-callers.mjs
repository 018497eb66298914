// Preloaded into a mount (NODE_OPTIONS=--import) by the attacks run in CALLER_MODES (undone-harness.ts): /proc/PID/syscall
// cannot be read, as for a mount whose user may not trace its callers (Yama's ptrace_scope), so
// the mount cannot tell a hide before a rename from an unlink's.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const real = fs.readFileSync;
fs.readFileSync = function readFileSync(path, ...rest) {
  if (typeof path === 'string' && /^\/proc\/\d+\/syscall$/.test(path)) {
    throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' });
  }
  return real.call(this, path, ...rest);
};
syncBuiltinESMExports();
