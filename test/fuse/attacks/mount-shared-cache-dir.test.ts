// Two mounts on one --cache-dir (or on the default TMPDIR/estuary-UID, which every mount of a
// user shares). fuse/fs/leftovers.ts: "a start removes the directories of processes that no
// longer run and leaves those of a mount still running on the same cache directory alone". It
// decides "no longer runs" by the PID in the directory's name, and a PID means nothing across PID
// namespaces: a mount started in a container (or `unshare -p`, a Slurm job container, podman)
// that shares /tmp with the host sees the host's live mount as dead and deletes its staging
// directory. The running mount's next change to an existing file then fails with EIO.
//
// Both mounts here use a private --cache-dir: the default one is shared with every other mount
// on this machine, and this test must not delete theirs.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, serverEnv, sh } from '../mount-helpers.ts';

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;
const fuse = fuseAvailable();
const unshare = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']).status === 0;

describe.skipIf(!fuse.ok || !unshare)('two mounts on one --cache-dir, in different PID namespaces', () => {
  it('a mount starting in a container does not delete the staging directory of a running one', async () => {
    const s3 = await startS3rver({ buckets: ['shared'] });
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    await client.send(new PutObjectCommand({ Bucket: 'shared', Key: 'log.txt', Body: 'line 1\n' }));
    client.destroy();
    const cache = await tempDir('atk-cache-');
    const a = await mountBucket(s3, 'shared', ['--cache-dir', cache]);
    // A change to an existing object goes through a staging file in <cache>/staging-<pid of A>.
    const first = await sh(`echo 'line 2' >> '${a.dir}/log.txt'`, undefined, 30_000);
    expect(first.code, first.out).toBe(0);

    // The same bucket, the same --cache-dir, from another PID namespace (its own mountpoint,
    // invisible outside its mount namespace).
    const bDir = await tempDir('atk-mnt-');
    const b = startChild(
      'unshare',
      ['-p', '--kill-child', '--mount-proc', NODE, BIN, 'mount', 'shared', bDir, '--endpoint', s3.endpoint, '--cache-dir', cache, '--log-format', 'json'],
      { env: serverEnv(s3) },
    );
    onTeardown(async () => {
      await b.stop('SIGKILL');
    });
    await b.waitFor(/"msg":"mounted /, 30_000);
    // Today B logs "removed staging files left by a mount that is no longer running" naming
    // <cache>/staging-<pid of A>: in B's namespace that PID does not exist.
    const second = await sh(`echo 'line 3' >> '${a.dir}/log.txt' && cat '${a.dir}/log.txt'`, undefined, 30_000);
    expect(b.output()).not.toContain(join(cache, `staging-${a.child.pid}`));
    // Today: "echo: write error: Input/output error" (ENOENT on the staging file's directory).
    expect(second.out).toBe('line 1\nline 2\nline 3\n');
    expect(second.code).toBe(0);
    expect(await isMounted(a.dir)).toBe(true);
  }, 60_000);
});
