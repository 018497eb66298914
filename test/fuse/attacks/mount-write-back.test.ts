// --write-back keeps acknowledged files in a journal under --cache-dir, by default
// ~/.cache/estuary/BUCKET, and resumes them at the next mount. Files closed on one store must
// never be uploaded to another store that happens to have a bucket of the same name.

import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultJournalDir } from '../../../fuse/cache-dir.ts';
import { fuseAvailable, mountBucket, runEstuary, serverEnv, sh } from '../mount-helpers.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startRelay } from './mount-relay.ts';

afterAll(runTeardowns);

function headOf(server: Parameters<typeof s3Client>[0], bucket: string, key: string): Promise<string> {
  return s3Client(server)
    .send(new HeadObjectCommand({ Bucket: bucket, Key: key }))
    .then(() => 'present', () => 'absent');
}

const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount --write-back: the journal after a crash', () => {
  it('does not upload one endpoint’s files to a same-named bucket on another endpoint', async () => {
    // Each mount's default journal goes under XDG_CACHE_HOME: a fresh one for this test.
    process.env.XDG_CACHE_HOME = await tempDir('estuary-xdg-');
    const siteA = await startS3rver({ buckets: ['data'] });
    const cloudB = await startS3rver({ buckets: ['data'] });
    const relayA = await startRelay(siteA);
    const a = await mountBucket(relayA.server, 'data', ['--write-back']);
    // Site A takes no uploads for now, so the file stays in the journal after its close().
    relayA.mode = { kind: 'status', status: 503, method: 'PUT' };
    const w = await sh(`echo 'site A only' > '${a.dir}/private.txt'`);
    expect(w.code, w.out).toBe(0);
    a.child.proc.kill('SIGKILL');
    await a.child.exited;
    // Later, the same user mounts the bucket of the same name on another endpoint.
    const b = await mountBucket(cloudB, 'data', ['--write-back']);
    await new Promise((r) => setTimeout(r, 3000));
    const onB = await s3Client(cloudB)
      .send(new HeadObjectCommand({ Bucket: 'data', Key: 'private.txt' }))
      .then(() => 'uploaded to B', () => 'absent');
    expect(onB, `${b.dir}: a file closed on site A`).toBe('absent');
    // Site A is back: its own mount resumes the file there.
    relayA.mode = { kind: 'pass' };
    await mountBucket(relayA.server, 'data', ['--write-back']);
    await expect.poll(() => headOf(siteA, 'data', 'private.txt'), { timeout: 20_000 }).toBe('present');
  }, 60_000);

  it('refuses a journal, given by --cache-dir, that holds another endpoint’s files', async () => {
    const cacheDir = await tempDir('estuary-wb-shared-');
    const siteA = await startS3rver({ buckets: ['data'] });
    const cloudB = await startS3rver({ buckets: ['data'] });
    const relayA = await startRelay(siteA);
    const a = await mountBucket(relayA.server, 'data', ['--write-back', '--cache-dir', cacheDir]);
    relayA.mode = { kind: 'status', status: 503, method: 'PUT' };
    expect((await sh(`echo 'site A only' > '${a.dir}/private.txt'`)).code).toBe(0);
    a.child.proc.kill('SIGKILL');
    await a.child.exited;
    const dir = await tempDir('estuary-mnt-');
    const b = runEstuary(
      ['mount', 'data', dir, '--endpoint', cloudB.endpoint, '--write-back', '--cache-dir', cacheDir],
      serverEnv(cloudB),
    );
    onTeardown(async () => {
      await b.stop('SIGKILL');
    });
    expect(await b.exited).toBe(2);
    const lines = b.output().trim().split('\n');
    expect(lines.at(-1)).toMatch(/write-back journal in .* holds files for bucket "data" at .*, not for this mount .*give this mount another --cache-dir$/);
    expect(await headOf(cloudB, 'data', 'private.txt')).toBe('absent');
  }, 60_000);

  it('leaves a journal of an older release, which recorded no endpoint, alone and says where it is', async () => {
    process.env.XDG_CACHE_HOME = await tempDir('estuary-xdg-');
    const legacy = join(process.env.XDG_CACHE_HOME, 'estuary', 'data', 'journal');
    await mkdir(legacy, { recursive: true });
    const record = { version: 1, id: 'old-1', key: 'old.txt', size: 3, options: {}, createdMs: 1 };
    await writeFile(join(legacy, 'old-1.json'), JSON.stringify(record));
    await writeFile(join(legacy, 'old-1.data'), 'old');
    const server = await startS3rver({ buckets: ['data'] });
    const m = await mountBucket(server, 'data', ['--write-back']);
    await expect.poll(() => m.child.output(), { timeout: 5000 }).toMatch(/older release holds 1 files.*--cache-dir/);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await headOf(server, 'data', 'old.txt')).toBe('absent');
  });

  it('gives prefixes that read alike as file names (a/b, a_b) folders of their own', () => {
    const one = defaultJournalDir({ endpoint: 'http://x', bucket: 'data', prefix: 'a/b' });
    expect(defaultJournalDir({ endpoint: 'http://x', bucket: 'data', prefix: 'a_b' })).not.toBe(one);
    expect(defaultJournalDir({ endpoint: 'http://y', bucket: 'data', prefix: 'a/b' })).not.toBe(one);
    expect(defaultJournalDir({ endpoint: 'http://x', bucket: 'data', prefix: 'a/b' })).toBe(one);
    expect(one).toMatch(/\/data-a_b-[0-9a-f]{16}$/);
  });
});
