// --write-back: the store is down when the stop begins and comes back a moment later, well within
// --shutdown-timeout.
//
// docs/SEMANTICS.md, "Write-back": while stopping, a failed upload is tried again every second,
// and ESTUARY_FS_JOURNAL_KEPT means the last try failed. The journal retries a failed upload with
// a doubling delay up to 30 s: a stop that only waited for those retries, after an outage of some
// seconds, tried nothing before its deadline and left the closed file in a journal on this host
// (a compute node that is shut down, or never mounts that bucket again, keeps it for ever).

import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, Other, startDriver } from './ra3-lib.ts';
import { startProxy } from './rb-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.runIf(fuse.ok && minio.ok)('--write-back, the store down at the stop and back within the deadline', () => {
  it('the closed file is uploaded before the mount exits', { timeout: 180_000 }, async () => {
    const server = await startMinio({ buckets: ['rbkt'] });
    const other = new Other(server, 'rbkt');
    let down = false;
    const proxy = await startProxy(server, 'rbkt', { down: () => down });
    const cache = await tempDir('estuary-rb-cache-');
    const src = `${await tempDir('estuary-rb-src-')}/src`;
    await writeFile(src, randomBytes(MiB));
    const m = await mountBucket(proxy.server, 'rbkt', ['--write-back', '--cache-dir', cache, '--retries', '1', '--request-timeout', '2s', '--shutdown-timeout', '3s']);
    const d = await startDriver();
    // The root's listing is cached: the create below needs nothing from the store.
    expect((await d.cmd({ op: 'listdir', path: m.dir })).err).toBeUndefined();
    down = true;
    const { fd } = await d.cmd({ op: 'create', path: `${m.dir}/f` });
    expect((await d.cmd({ op: 'write', fd, src, from: 0, len: MiB })).err).toBeUndefined();
    expect((await d.cmd({ op: 'close', fd })).err).toBeUndefined();
    // An outage of 8 s: the journal's tries at about 0, 1, 3 and 7 s fail; the next is due at 15 s,
    // after the stop's deadline (8 + 3 s).
    await sleep(8000);
    m.child.proc.kill('SIGTERM');
    await m.child.waitFor(/"msg":"stopping"/, 10_000);
    await sleep(500);
    down = false;
    const upAt = Date.now();
    const exit = await Promise.race([m.child.exited, sleep(40_000).then(() => 'still running')]);
    const after = ((Date.now() - upAt) / 1000).toFixed(1);
    const stored = await other.s3.send(new HeadObjectCommand({ Bucket: 'rbkt', Key: 'f' })).then(
      (h) => `stored (${h.ContentLength} bytes)`,
      () => 'NOT STORED',
    );
    const journal = await readdir(cache, { recursive: true }).catch(() => []);
    const kept = m.child.output().split('\n').filter((l) => /JOURNAL_KEPT|still refused|not taking uploads/.test(l)).map((l) => l.slice(0, 240));
    const tried = proxy.seen.filter((s) => s.key === 'f' && s.status !== 0).length;
    const report = `exit ${exit} ${after} s after the store came back; object ${stored}; requests for f that reached the store after it came back: ${tried}; journal holds ${journal.length} entries\n${kept.join('\n')}`;
    console.log(report);
    expect(report).toMatch(/object stored \(1048576 bytes\)/);
  });
});
