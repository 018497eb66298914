// The checks `estuary mount` makes before it asks for the bucket, each ending the command with one
// line that names its cause: the mountpoint (resolved through symlinks, as /proc/mounts names
// it; a dead mount left there is cleaned up), a cache directory the mount would hide, and what
// the endpoint answers to one probe with a short deadline.

import { stat } from 'node:fs/promises';
import type { EstuaryError } from '../lib/errors.ts';
import { diagnoseEndpoint, webRefusal } from './endpoint-diagnosis.ts';
import { probeEndpoint } from './endpoint-probe.ts';
import { fsErrors } from './errors.ts';
import { canonicalPath, isMounted, unmountPath } from './mount-table.ts';

/**
 * Checks that `given` is a directory with nothing live mounted on it, and returns its real path:
 * the one to mount on and to watch in /proc/mounts.
 */
export async function checkMountpoint(given: string): Promise<string> {
  const path = await canonicalPath(given);
  if (await isMounted(path)) {
    // A mount left by a crashed process answers ENOTCONN ("Transport endpoint is not connected").
    const alive = await stat(path).then(
      () => true,
      (err: NodeJS.ErrnoException) => err.code !== 'ENOTCONN',
    );
    if (alive) throw fsErrors.badMountpoint(given, 'something is already mounted there');
    await unmountPath(path, true);
  }
  const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOTCONN') throw fsErrors.deadMount(given);
    throw fsErrors.badMountpoint(given, err.code === 'ENOENT' ? 'it does not exist' : String(err.code));
  });
  if (!st.isDirectory()) throw fsErrors.badMountpoint(given, 'it is not a directory');
  return path;
}

/**
 * Throws what one unsigned request to --endpoint shows the mount could not use. Returns what to
 * say instead should the bucket check be refused: the error naming the endpoint as not S3 when
 * the probe was refused with a web page (see webRefusal), else undefined.
 */
export async function checkEndpoint(endpoint: string, bucket: string): Promise<EstuaryError | undefined> {
  const facts = await probeEndpoint(endpoint, bucket);
  const refused = diagnoseEndpoint(facts);
  if (refused) throw refused;
  return webRefusal(facts);
}
