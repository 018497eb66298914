// SIGHUP to `estuary mount` while a file is being written: what a closing terminal or ssh session
// sends to the foreground mount it started (docs/SEMANTICS.md, "Mounting, unmounting, fstab").
// Left at its default action, SIGHUP ends the process on the spot: the writer's next write fails
// (ENOTCONN), its file never reaches the bucket, a dead "Transport endpoint is not connected"
// mount stays behind, and the log says nothing. Expected: SIGHUP is a stop signal like SIGTERM
// (the writer finishes, its close uploads, the process exits 0, the log names the signal).
//
// `nohup estuary mount ... &` sets SIGHUP to be ignored, but Node resets every signal to its
// default action at start (only SIGPIPE and SIGXFSZ stay ignored), so the mount cannot honour it;
// it stops cleanly instead.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { fuseAvailable, mountBucket, serverEnv } from '../mount-helpers.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { sh } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, Other, startDriver } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();
const SIZE = 24 * MiB;

describe.runIf(fuse.ok && minio.ok)('SIGHUP (a closing terminal) while a file is written', () => {
  it('the writer finishes, its file is uploaded whole, and the log names the signal', { timeout: 120_000 }, async () => {
    const server = await startMinio({ buckets: ['rbkt'] });
    const other = new Other(server, 'rbkt');
    const src = `${await tempDir('estuary-rb-src-')}/src`;
    const NEW = randomBytes(SIZE);
    await writeFile(src, NEW);
    const m = await mountBucket(server, 'rbkt');
    const d = await startDriver();
    const { fd } = await d.cmd({ op: 'create', path: `${m.dir}/f` });
    expect((await d.cmd({ op: 'write', fd, src, from: 0, len: SIZE / 2 })).err).toBeUndefined();
    m.child.proc.kill('SIGHUP');
    await sleep(1000);
    const w = await d.cmd({ op: 'write', fd, src, from: SIZE / 2, len: SIZE / 2 });
    const c = await d.cmd({ op: 'close', fd });
    // Give a stop begun by the SIGHUP time to end; a mount that ignored it is still running.
    const exit = await Promise.race([m.child.exited, sleep(15_000).then(() => 'still running')]);
    const body = await other.s3
      .send(new GetObjectCommand({ Bucket: 'rbkt', Key: 'f' }))
      .then(async (r) => Buffer.from(await r.Body!.transformToByteArray()))
      .catch((err: unknown) => String((err as Error).name));
    const stored = Buffer.isBuffer(body) ? (body.equals(NEW) ? 'whole' : `CUT (${body.length} bytes)`) : `absent (${body})`;
    const dead = exit !== 'still running' && (await isMounted(m.dir));
    const said = /SIGHUP/.test(m.child.output()) ? 'log names SIGHUP' : 'log says nothing of SIGHUP';
    const report = `write ${w.err ?? 'ok'}, close ${c.err ?? 'ok'}, exit ${exit}, object ${stored}, ${dead ? 'a dead mount left on the mountpoint' : 'no dead mount'}, ${said}`;
    console.log(report);
    if (exit === 'still running') await m.child.stop('SIGTERM', 20_000);
    expect(report).toMatch(/^write ok, close ok, exit (0|still running), object whole, no dead mount, log names SIGHUP$/);
  });
});

describe.runIf(fuse.ok && minio.ok)('nohup estuary mount, then SIGHUP (bash passes it to its jobs as the session ends)', () => {
  // Node resets SIGHUP to its default action at start, so the mount cannot see that nohup asked
  // to ignore it: it stops as on SIGTERM, cleanly (docs/SEMANTICS.md says to use setsid or a
  // service manager to outlive the session).
  it('the mount stops as on SIGTERM: exit 0, nothing left mounted', { timeout: 120_000 }, async () => {
    const server = await startMinio({ buckets: ['rbkt'] });
    const other = new Other(server, 'rbkt');
    await other.put('g', randomBytes(MiB));
    const dir = await tempDir('estuary-rb-mnt-');
    const bin = new URL('../../../bin/estuary.js', import.meta.url).pathname;
    const child = startChild('nohup', [NODE, bin, 'mount', 'rbkt', dir, '--endpoint', server.endpoint, '--log-format', 'json'], {
      env: serverEnv(server),
    });
    onTeardown(async () => {
      if (await isMounted(dir)) await sh(`fusermount -uz '${dir}' || umount -l '${dir}'`);
      await child.stop('SIGKILL');
    });
    await child.waitFor(/"msg":"mounted /, 30_000);
    child.proc.kill('SIGHUP');
    const exit = await Promise.race([child.exited, sleep(20_000).then(() => 'running')]);
    const report = `after SIGHUP under nohup: exit ${exit}, ${(await isMounted(dir)) ? 'still mounted' : 'nothing mounted'}`;
    expect(report).toBe('after SIGHUP under nohup: exit 0, nothing mounted');
  });
});
