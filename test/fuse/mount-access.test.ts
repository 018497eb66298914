// `estuary mount` where libfuse would refuse: a non-empty mountpoint, a user who may not open
// /dev/fuse (for everyone, or outside its group), --allow-other without user_allow_other, a
// mountpoint the user may not write. Each gets its own cause and remedy, exit 2, before the bucket
// is asked (the endpoint here answers nothing). Users are unprivileged uids through setpriv; a
// /dev/fuse with other permissions, and an /etc/fuse.conf, are bind-mounted in a private mount
// namespace (unshare -m), so the machine's own are never changed.

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMounted } from '../../fuse/mount-table.ts';
import { onTeardown, runTeardowns } from '../helpers/cleanup.ts';
import { NODE } from '../helpers/process.ts';
import { type S3rverServer, startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { fuseAvailable, runEstuary, serverEnv, sh } from './mount-helpers.ts';

afterAll(runTeardowns);

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;
const NOBODY = 65534;
const NOWHERE = 'http://127.0.0.1:9';
const isRoot = process.getuid?.() === 0;

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

interface Device {
  readonly mode: string;
  readonly group?: string;
}

/**
 * Runs `estuary mount` as `uid` (no supplementary groups), optionally in a mount namespace whose
 * /dev/fuse has `device`'s permissions and whose /etc/fuse.conf is empty.
 */
async function mountAs(uid: number, args: string[], scratch: string, device?: Device) {
  const cmd = [
    `setpriv --reuid=${uid} --regid=${uid} --clear-groups env HOME=${q(scratch)}`,
    'AWS_ACCESS_KEY_ID=k AWS_SECRET_ACCESS_KEY=k',
    q(NODE),
    q(BIN),
    'mount',
    ...args.map(q),
  ].join(' ');
  if (!device) return sh(cmd);
  const own = await mkdtemp(join(scratch, 'dev-'));
  const node = join(own, 'fuse');
  const conf = join(own, 'fuse.conf');
  const inside = [
    `mknod ${q(node)} c 10 229`,
    `chown root:${device.group ?? 'root'} ${q(node)}`,
    `chmod ${device.mode} ${q(node)}`,
    `mount --bind ${q(node)} /dev/fuse`,
    `: > ${q(conf)} && mount --bind ${q(conf)} /etc/fuse.conf`,
    `exec ${cmd}`,
  ].join(' && ');
  return sh(`unshare -m --propagation private bash -c ${q(inside)}`);
}

describe.runIf(fuseAvailable().ok && isRoot)('estuary mount names why FUSE would refuse', () => {
  let scratch: string;
  let dir: string;

  beforeAll(async () => {
    scratch = await tempDir('estuary-access-');
    await sh(`chmod 755 ${q(scratch)}`);
    dir = join(scratch, 'mnt');
    await mkdir(dir, { mode: 0o777 });
    await sh(`chmod 777 ${q(dir)}`);
  });

  it('refuses a non-empty mountpoint and names --allow-non-empty', async () => {
    const full = join(scratch, 'full');
    await mkdir(full);
    await writeFile(join(full, 'a.txt'), 'a');
    await writeFile(join(full, 'b.txt'), 'b');
    const r = await sh(`${q(NODE)} ${q(BIN)} mount data ${q(full)} --endpoint ${NOWHERE}`);
    expect(r.out).toBe(
      `estuary: cannot mount on ${full}: it is not empty (a.txt, b.txt); give an empty directory, ` +
        'or --allow-non-empty to hide what it holds while mounted\n',
    );
    expect(r.code).toBe(2);
  });

  it('names /dev/fuse and its permissions for a user who may not open it', async () => {
    const r = await mountAs(NOBODY, ['data', dir, '--endpoint', NOWHERE], scratch, { mode: '0600' });
    expect(r.out).toBe(
      `estuary: /dev/fuse (crw------- root:root) cannot be opened by uid ${NOBODY} (nobody); mount as root, ` +
        'or let users open it (chmod 0666 /dev/fuse, the usual mode, kept by a udev rule)\n',
    );
    expect(r.code).toBe(2);
  });

  it('names the group that may open /dev/fuse, and how to join it', async () => {
    const group = `estuary-fuse-${process.pid}`;
    expect((await sh(`groupadd ${group}`)).code).toBe(0);
    onTeardown(async () => void (await sh(`groupdel ${group}`)));
    const r = await mountAs(NOBODY, ['data', dir, '--endpoint', NOWHERE], scratch, { mode: '0660', group });
    expect(r.out).toBe(
      `estuary: /dev/fuse (crw-rw---- root:${group}) cannot be opened by uid ${NOBODY} (nobody), who is not in ` +
        `group ${group}; add the user to it (usermod -aG ${group} nobody, then log in again), or mount as root\n`,
    );
    expect(r.code).toBe(2);
  });

  it('asks for user_allow_other in /etc/fuse.conf when a user gives --allow-other', async () => {
    const args = ['data', dir, '--endpoint', NOWHERE, '--allow-other'];
    const r = await mountAs(NOBODY, args, scratch, { mode: '0666' });
    expect(r.out).toBe(
      'estuary: --allow-other is only allowed to users other than root when /etc/fuse.conf has the line ' +
        'user_allow_other; add it (as root), or leave out --allow-other\n',
    );
    expect(r.code).toBe(2);
  });

  it('refuses a mountpoint the user may not write', async () => {
    const theirs = join(scratch, 'theirs');
    await mkdir(theirs);
    await sh(`chmod 755 ${q(theirs)}`);
    const r = await mountAs(NOBODY, ['data', theirs, '--endpoint', NOWHERE], scratch, { mode: '0666' });
    expect(r.out).toBe(
      `estuary: cannot mount on ${theirs}: uid ${NOBODY} may not write to it, and FUSE lets users mount only ` +
        'on directories they may write; use a directory of your own\n',
    );
    expect(r.code).toBe(2);
  });

  describe('with a bucket', () => {
    let server: S3rverServer;
    beforeAll(async () => {
      server = await startS3rver({ buckets: ['over'] });
    });

    it('mounts over a non-empty directory with --allow-non-empty, and shows it again afterwards', async () => {
      const full = join(scratch, 'over');
      await mkdir(full);
      await writeFile(join(full, 'hidden.txt'), 'below');
      const child = runEstuary(
        ['mount', 'over', full, '--endpoint', server.endpoint, '--allow-non-empty', '--log-format', 'json'],
        serverEnv(server),
      );
      onTeardown(async () => {
        if (await isMounted(full)) await sh(`fusermount -uz ${q(full)}`);
        await child.stop('SIGKILL');
      });
      await child.waitFor(/"msg":"mounted /, 30_000);
      expect((await sh(`ls -A ${q(full)}`)).out).toBe('');
      expect(await child.stop('SIGTERM')).toBe(0);
      expect((await sh(`ls -A ${q(full)}`)).out).toBe('hidden.txt\n');
    });

    it("takes fstab's nonempty option as --allow-non-empty", async () => {
      const full = join(scratch, 'fstab-over');
      await mkdir(full);
      await writeFile(join(full, 'hidden.txt'), 'below');
      onTeardown(async () => void (await sh(`mountpoint -q ${q(full)} && fusermount -uz ${q(full)}; true`)));
      const helper = new URL('../../fuse/bin/mount.fuse.estuary', import.meta.url).pathname;
      const env = Object.entries({
        ...serverEnv(server),
        ESTUARY: `${NODE} ${BIN}`,
        ESTUARY_MOUNT_LOG: join(scratch, 'fstab-mount.log'),
      })
        .map(([k, v]) => `${k}=${q(String(v))}`)
        .join(' ');
      const r = await sh(
        `env ${env} ${q(helper)} over ${q(full)} -o rw,_netdev,endpoint=${server.endpoint},nonempty` +
          ` && ls -A ${q(full)} && fusermount -u ${q(full)}`,
      );
      expect(r.code, r.out).toBe(0);
      expect(r.out).toBe('');
    });
  });
});
