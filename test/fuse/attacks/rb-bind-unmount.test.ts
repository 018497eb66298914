// A mount that is also reachable through a bind mount of its mountpoint (a container started with
// `-v /mnt/kek:/data`, or `mount --bind`), and an unmount of the original mountpoint only.
//
// docs/SEMANTICS.md, "Mounting, unmounting, fstab": "`estuary umount MOUNTPOINT` or `fusermount -u
// MOUNTPOINT` unmount ...; the mount process notices and exits." The mount watches its own
// mountpoint in /proc/mounts (fuse/mount-table.ts watchExternalUnmount) and takes its
// disappearance for the end of the whole mount: it stops, and exits as soon as no file is open.
// The bind mount, which nobody unmounted and which a job is still reading through, is left as a
// dead "Transport endpoint is not connected" mount: the job's next open fails.

import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, Other, startDriver } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.runIf(fuse.ok && minio.ok)('an unmount of the mountpoint while a bind mount of it is in use', () => {
  it('the bind mount goes on serving its reader', { timeout: 120_000 }, async () => {
    const server = await startMinio({ buckets: ['rbkt'] });
    const other = new Other(server, 'rbkt');
    for (let i = 0; i < 3; i++) await other.put(`d/f${i}`, randomBytes(MiB));
    const m = await mountBucket(server, 'rbkt');
    const y = `${await tempDir('estuary-rb-bind-')}/y`;
    await mkdir(y);
    const bound = await sh(`mount --bind '${m.dir}' '${y}'`);
    expect(bound.code, bound.out).toBe(0);
    onTeardown(async () => {
      if (await isMounted(y)) await sh(`umount -l '${y}'`);
    });
    const d = await startDriver();
    const first = await d.cmd({ op: 'readall', path: `${y}/d/f0` });
    expect(first.err).toBeUndefined();
    // Unmount the original mountpoint only: nothing is open through it, so a plain unmount works.
    const u = await sh(`fusermount -u '${m.dir}'`);
    expect(u.code, u.out).toBe(0);
    await sleep(4000);
    const alive = await Promise.race([m.child.exited.then(() => false), sleep(10).then(() => true)]);
    const second = await d.cmd({ op: 'readall', path: `${y}/d/f1` }, 20_000);
    const report = `mount process ${alive ? 'alive' : 'exited'} 4 s after the unmount of the mountpoint; read through the bind mount: ${second.err ?? `ok (${second.size} bytes)`}`;
    console.log(`${report}\n${m.child.output().split('\n').filter((l) => /stopp|unmount|waiting|exiting/.test(l)).join('\n')}`);
    expect(report).toMatch(/read through the bind mount: ok \(1048576 bytes\)/);
  });
});
