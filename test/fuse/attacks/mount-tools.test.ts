// The tools users run against the mount: `tar c` right after `cp -a` into it must not see files
// "change as we read them" when nothing changed them (tar compares stat before and after).

import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount: cp -a then tar c', () => {
  it('tar finds no file changed while it read it', async () => {
    const server = await startS3rver({ buckets: ['tools'] });
    const m = await mountBucket(server, 'tools', ['--cache-ttl', '1s']);
    const work = await tempDir('estuary-tools-');
    const prep = await sh(
      `mkdir -p src/a && for i in $(seq 12); do head -c $((i*997)) /dev/urandom > src/a/f$i; done &&
       touch -d 2001-01-01 src/a/f1`,
      work,
    );
    expect(prep.code, prep.out).toBe(0);
    const cp = await sh(`cp -a src '${m.dir}/copy'`, work);
    expect(cp.code, cp.out).toBe(0);
    // The attributes the copy left in the mount's cache expire while tar walks (1 s TTL).
    const tar = await sh(`sleep 0.5; tar cf '${work}/out.tar' -C '${m.dir}/copy' .`, work);
    expect(tar.out).not.toMatch(/changed as we read it/);
    expect(tar.code, tar.out).toBe(0);
  });
});
