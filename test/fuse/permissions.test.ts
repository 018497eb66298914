// A mount shared with other users (--allow-other): the kernel checks permissions on the attributes
// the mount answers, so those must be the stored ones, and new names must belong to whoever made
// them. Runs commands as two unprivileged uids through setpriv (no account needed), against a
// real mount on s3rver.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../helpers/cleanup.ts';
import { type S3rverServer, startS3rver } from '../helpers/s3rver.ts';
import { fuseAvailable, type Mounted, mountBucket, sh } from './mount-helpers.ts';
import { storeClient } from './s3/client.ts';

afterAll(runTeardowns);

const NOBODY = 65534;
const OTHER = 65533;

/** Runs `script` in the mount as `uid` (same gid), without any supplementary group. */
function as(uid: number, dir: string, script: string) {
  const quoted = `cd '${dir}' && ${script}`.replace(/'/g, `'\\''`);
  return sh(`setpriv --reuid=${uid} --regid=${uid} --clear-groups bash -c '${quoted}' 2>&1`);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(fuseAvailable().ok)('a mount shared with other users (--allow-other)', () => {
  let server: S3rverServer;
  let m: Mounted;

  beforeAll(async () => {
    server = await startS3rver({ buckets: ['perm'] });
    m = await mountBucket(server, 'perm', ['--allow-other', '--cache-ttl', '1s']);
  });

  it('never lets a listing turn a private file readable, nor checks permissions on default attributes', async () => {
    const setup = await sh(
      `cd '${m.dir}' && mkdir p && printf secret > p/secret && chmod 600 p/secret && ls -l p`,
    );
    expect(setup.code, setup.out).toBe(0);
    // Written by another tool in s3fs's format: private to root, and never looked at by the mount.
    await storeClient(server, 'perm').put('p/foreign', Buffer.from('foreign'), {
      metadata: { mode: String(0o100600), uid: '0', gid: '0' },
    });
    const before = await as(NOBODY, m.dir, 'cat p/secret');
    expect(before.out).toMatch(/Permission denied/);
    // Past the entry cache's TTL and the kernel's attribute timeout, a fresh listing by the owner.
    await pause(2100);
    expect((await sh(`ls -l '${m.dir}/p' >/dev/null`)).code).toBe(0);
    const after = await as(NOBODY, m.dir, 'cat p/secret; cat p/foreign; stat -c "%a %u" p/secret p/foreign');
    expect(after.out).not.toMatch(/^(secret|foreign)/m);
    expect(after.out.match(/Permission denied/g)).toHaveLength(2);
    expect(after.out).toMatch(/^600 0\n600 0$/m);
  });

  it('gives new files, directories and symlinks to the user who made them, who may chmod them', async () => {
    expect((await sh(`mkdir '${m.dir}/pub' && chmod 1777 '${m.dir}/pub'`)).code).toBe(0);
    const mine = await as(
      NOBODY,
      m.dir,
      'cd pub && printf mine > mine && mkdir d && ln -s mine l && chmod 600 mine && ' +
        'stat -c "%n %u:%g %a" mine d && stat -c "%n %u:%g" l && cat mine',
    );
    expect(mine.code, mine.out).toBe(0);
    expect(mine.out).toBe(
      `mine ${NOBODY}:${NOBODY} 600\nd ${NOBODY}:${NOBODY} 755\nl ${NOBODY}:${NOBODY}\nmine`,
    );
    const other = await as(OTHER, m.dir, 'cat pub/mine');
    expect(other.code).not.toBe(0);
    expect(other.out).toMatch(/Permission denied/);
    const client = storeClient(server, 'perm');
    expect((await client.head('pub/mine'))?.metadata).toMatchObject({
      mode: String(0o100600),
      uid: String(NOBODY),
      gid: String(NOBODY),
    });
    expect((await client.head('pub/d/'))?.metadata).toMatchObject({ uid: String(NOBODY) });
    expect((await client.head('pub/l'))?.metadata).toMatchObject({ uid: String(NOBODY) });
  });
});
