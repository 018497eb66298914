// The mount's stop (docs/SEMANTICS.md, "Mounting, unmounting, fstab"):
//   "SIGINT/SIGTERM: the mountpoint is detached at once (new opens fail), files still open stay
//    usable until closed, and the process exits only when every open file is closed and uploaded
//    — even past --shutdown-timeout; a second signal exits at once."
//   "estuary umount MOUNTPOINT or fusermount -u MOUNTPOINT unmount (refused while files are open;
//    --lazy detaches anyway); the mount process notices and exits."  (estuary umount --help:
//    "--lazy  detach now and let files still open finish")
//
// 1. A reader that holds a file open across a SIGTERM for longer than --shutdown-timeout: the
//    file must stay readable until it closes it; a process that stopped waiting for read-only
//    files at the deadline would exit under the reader.
// 2. `estuary umount --lazy` while a file is being written, then ONE SIGTERM (what a service
//    manager sends once its ExecStop has run): that signal is the first, not the second, so the
//    process must not exit at once (130) and the writer's file is uploaded. A signal that
//    arrives while the stop's handlers are swapped would also end the process by its default
//    action.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, runEstuary } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { isAlive } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, mibDigests, Other, startDriver } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.runIf(fuse.ok && minio.ok)('the mount\'s exit after a stop', () => {
  it('a file open for reading across SIGTERM stays readable past --shutdown-timeout until it is closed', async () => {
    const server = await startMinio({ buckets: ['ra3'] });
    const other = new Other(server, 'ra3');
    const body = randomBytes(8 * MiB);
    await other.put('f', body);
    const m = await mountBucket(server, 'ra3', ['--shutdown-timeout', '2s']);
    const d = await startDriver();
    const { fd } = await d.cmd({ op: 'open', path: `${m.dir}/f` });
    expect(fd).toBeDefined();
    expect((await d.cmd({ op: 'read', fd, upto: MiB })).pos).toBe(MiB);
    m.child.proc.kill('SIGTERM');
    await m.child.waitFor(/"msg":"stopping"/, 10_000);
    // The reader takes its time (a `less`, a slow consumer of `tar c`): past the deadline and the
    // 2 s exit grace.
    await sleep(5000);
    const rest = await d.cmd({ op: 'read', fd });
    const closed = await d.cmd({ op: 'close', fd });
    const exit = await Promise.race([m.child.exited, sleep(10_000).then(() => 'still running')]);
    expect(
      { rest: rest.err ?? 'read', mibs: closed.mibs?.length === 8 && JSON.stringify(closed.mibs) === JSON.stringify(mibDigests(body)) },
      `log:\n${m.child.output().split('\n').filter((l) => /stopp|exit|wait|unmount/.test(l)).join('\n')}`,
    ).toEqual({ rest: 'read', mibs: true });
    expect(exit).toBe(0);
  });

  it('umount --lazy while a file is written, then one SIGTERM: the writer finishes and the file is uploaded', async () => {
    const server = await startMinio({ buckets: ['ra3'] });
    const other = new Other(server, 'ra3');
    const src = `${await tempDir('estuary-ra3-src-')}/src`;
    const body = randomBytes(40 * MiB);
    await writeFile(src, body);
    const m = await mountBucket(server, 'ra3', ['--shutdown-timeout', '2s']);
    const d = await startDriver();
    const { fd } = await d.cmd({ op: 'create', path: `${m.dir}/big` });
    expect(fd).toBeDefined();
    expect((await d.cmd({ op: 'write', fd, src, from: 0, len: 20 * MiB })).pos).toBe(20 * MiB);
    // The operator (or ExecStop=estuary umount --lazy) detaches the mount: open files finish.
    const umount = runEstuary(['umount', '--lazy', m.dir], process.env);
    expect(await umount.exited).toBe(0);
    // Past the mount's check for an end from outside (every second).
    await sleep(1500);
    // The service manager then stops the main process: its first and only SIGTERM.
    m.child.proc.kill('SIGTERM');
    await sleep(1000);
    const wrote = await d.cmd({ op: 'write', fd, src, from: 20 * MiB, len: 20 * MiB });
    const closed = await d.cmd({ op: 'close', fd });
    const exit = await Promise.race([m.child.exited, sleep(20_000).then(() => 'still running')]);
    const stored = await other.s3
      .send(new GetObjectCommand({ Bucket: 'ra3', Key: 'big' }))
      .then(async (r) => Buffer.from(await r.Body!.transformToByteArray()).equals(body), (err: Error) => err.name);
    expect(
      { write: wrote.err ?? 'ok', close: closed.err ?? 'ok', stored, exit },
      `signal ${m.child.proc.signalCode}; log:\n${m.child.output().split('\n').filter((l) => /signal|stopp|exit|wait|unmount|error|fatal/i.test(l)).join('\n')}`,
    ).toEqual({ write: 'ok', close: 'ok', stored: true, exit: 0 });
    expect(isAlive(m.child.pid)).toBe(false);
  });
});
