// The exit status of a stop in which a file could not be uploaded.
//
// docs/ERRORS.md: "Exit statuses: `0` success (for the long-running roles also after a clean stop
// on SIGINT/SIGTERM), `1` a runtime failure". A SIGTERM arrives while a file is being written; the
// store goes down; the writer's close() fails (EIO) and the stop's last try (fs.drain) fails too:
// the mount logs "some files could not be uploaded before unmount" and exits 0, so a service
// manager, a job script (`estuary mount ...; echo $?`) or an fstab helper records a clean stop of a
// mount that lost a file.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, startDriver } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.runIf(fuse.ok && minio.ok)('a stop in which a file could not be uploaded', () => {
  it('does not exit 0', { timeout: 180_000 }, async () => {
    const src = `${await tempDir('estuary-rb-src-')}/src`;
    await writeFile(src, randomBytes(MiB));
    const server = await startMinio({ buckets: ['rbkt'] });
    const m = await mountBucket(server, 'rbkt', ['--retries', '1', '--request-timeout', '2s', '--shutdown-timeout', '1s']);
    const d = await startDriver();
    const { fd } = await d.cmd({ op: 'create', path: `${m.dir}/f` });
    expect((await d.cmd({ op: 'write', fd, src, from: 0, len: MiB })).err).toBeUndefined();
    m.child.proc.kill('SIGTERM');
    await m.child.waitFor(/"msg":"stopping"/, 10_000);
    await server.kill();
    const closed = await d.cmd({ op: 'close', fd }, 60_000);
    const exit = await Promise.race([m.child.exited, sleep(30_000).then(() => 'still running')]);
    const lost = /could not be uploaded|upload failed|UPLOAD_FAILED/.test(m.child.output());
    const report = `close ${closed.err ?? 'ok'}, log ${lost ? 'says a file was not uploaded' : 'says nothing'}, exit ${exit}`;
    console.log(report);
    expect(report).toMatch(/^close EIO, log says a file was not uploaded, exit 1$/);
  });
});
