// What the log says when --shutdown-timeout passes while a writer still has its file open.
//
// docs/SEMANTICS.md, "Mounting, unmounting, fstab": "the process exits only when every open file is
// closed and uploaded — even past --shutdown-timeout". fuse/command.ts: "Uploads are never cut
// short: the deadline only makes the log say what is still running." But lib/lifecycle.ts logs, at
// the deadline, "shutdown deadline reached: aborting in-flight work", a warning: an operator
// reading the log of a stop (or a log alert on warnings) is told the writer's upload was cut, while
// the mount goes on waiting and the file is then uploaded whole. The log must say what happens:
// still waiting for the open file (and which), not an abort.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, Other, startDriver } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.runIf(fuse.ok && minio.ok)('the shutdown deadline passes while a file is still open', () => {
  it('the file is uploaded whole, and the log does not say in-flight work was aborted', { timeout: 120_000 }, async () => {
    const server = await startMinio({ buckets: ['rbkt'] });
    const other = new Other(server, 'rbkt');
    const src = `${await tempDir('estuary-rb-src-')}/src`;
    const NEW = randomBytes(8 * MiB);
    await writeFile(src, NEW);
    const m = await mountBucket(server, 'rbkt', ['--shutdown-timeout', '1s']);
    const d = await startDriver();
    const { fd } = await d.cmd({ op: 'create', path: `${m.dir}/f` });
    expect((await d.cmd({ op: 'write', fd, src, from: 0, len: 4 * MiB })).err).toBeUndefined();
    m.child.proc.kill('SIGTERM');
    await m.child.waitFor(/"msg":"stopping"/, 10_000);
    await sleep(2500);
    const w = await d.cmd({ op: 'write', fd, src, from: 4 * MiB, len: 4 * MiB });
    const c = await d.cmd({ op: 'close', fd });
    const exit = await Promise.race([m.child.exited, sleep(20_000).then(() => 'still running')]);
    const body = await other.s3
      .send(new GetObjectCommand({ Bucket: 'rbkt', Key: 'f' }))
      .then(async (r) => Buffer.from(await r.Body!.transformToByteArray()));
    const log = m.child
      .output()
      .split('\n')
      .filter((l) => /stopp|deadline|abort|waiting|unmounted/.test(l))
      .map((l) => l.slice(0, 200));
    const report = `write ${w.err ?? 'ok'}, close ${c.err ?? 'ok'}, exit ${exit}, object ${body.equals(NEW) ? 'whole' : 'CUT'}\n${log.join('\n')}`;
    console.log(report);
    expect(report).toMatch(/^write ok, close ok, exit 0, object whole/);
    // What was logged must not claim an abort that did not happen.
    expect(log.filter((l) => /deadline/.test(l) && /abort/i.test(l)), report).toEqual([]);
  });
});
