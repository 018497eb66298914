// An outside lazy unmount followed at once by another mount on the same path: what an admin does
// to restart a mount with new options (`estuary umount --lazy /mnt/x; estuary mount ... /mnt/x`),
// or a script that mounts something else there.
//
// docs/SEMANTICS.md, "Mounting, unmounting, fstab": "`estuary umount MOUNTPOINT` or `fusermount -u
// MOUNTPOINT` unmount (...; `--lazy` detaches anyway); the mount process notices and exits." The
// mount notices by looking for its path in /proc/mounts once a second (fuse/mount-table.ts
// watchExternalUnmount), so a new mount on that path within the second hides the unmount from it:
//   1. the old process never exits (nothing open, nothing to upload: a hang);
//   2. its later stop (SIGTERM from a service manager, or at shutdown) detaches whatever is then
//      mounted on the path (FuseMount.detach: `fusermount -uz PATH`): the new mount is cut off.
// Here the new mount is a tmpfs, mounted right after the unmount (the race made certain); another
// estuary mount that comes up within the second is the same.

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.runIf(fuse.ok && minio.ok)('a lazy unmount, then at once another mount on the same path', () => {
  it('the old mount process exits, and its stop leaves the new mount alone', { timeout: 120_000 }, async () => {
    const server = await startMinio({ buckets: ['rbkt'] });
    const m = await mountBucket(server, 'rbkt');
    onTeardown(async () => {
      // The tmpfs first (the mount helper's teardown only looks for one mount on the path).
      for (let i = 0; i < 3 && (await isMounted(m.dir)); i++) await sh(`umount -l '${m.dir}'`);
    });
    const swap = await sh(`fusermount -uz '${m.dir}' && mount -t tmpfs rb-new '${m.dir}' && touch '${m.dir}/new-mount-file'`);
    expect(swap.code, swap.out).toBe(0);
    await sleep(5000);
    const exitedAlone = await Promise.race([m.child.exited.then(() => true), sleep(10).then(() => false)]);
    let newMount = 'not checked';
    if (!exitedAlone) {
      // A service manager stops the old process.
      m.child.proc.kill('SIGTERM');
      await Promise.race([m.child.exited, sleep(15_000)]);
      newMount = (await sh(`grep -c ' ${m.dir} tmpfs ' /proc/mounts; ls '${m.dir}'`)).out.includes('new-mount-file')
        ? 'still mounted'
        : 'UNMOUNTED by the old mount process';
    }
    const report = `old mount process ${exitedAlone ? 'exited on its own' : 'STILL RUNNING 5 s after the unmount'}; after its SIGTERM the new mount on the path: ${newMount}`;
    console.log(`${report}\n${m.child.output().split('\n').filter((l) => /stopp|unmount|detach|exiting/.test(l)).join('\n')}`);
    expect(report).toMatch(/exited on its own/);
  });
});
