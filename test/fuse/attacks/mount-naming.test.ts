// The naming rule (docs/SEMANTICS.md): every key is reachable under exactly one name. A key that
// is both an object and a prefix (`d` and `d/x`, as other S3 clients make them) must not lose
// the object.

import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount: a key that is both an object and a prefix', () => {
  it('shows the object under some name in its directory', async () => {
    const server = await startS3rver({ buckets: ['both'] });
    const client = s3Client(server);
    await client.send(new PutObjectCommand({ Bucket: 'both', Key: 'd', Body: 'the object d' }));
    await client.send(new PutObjectCommand({ Bucket: 'both', Key: 'd/x', Body: 'under d/' }));
    const m = await mountBucket(server, 'both');
    // Every regular file of the mount's root, with its content.
    const r = await sh(`cd '${m.dir}' && for f in * .[!.]*; do [ -f "$f" ] && cat -- "$f" && echo; done; true`);
    expect(r.out, `regular files at the root: ${r.out}`).toContain('the object d');
    expect((await sh(`cat '${m.dir}/d/x'`)).out).toBe('under d/');
    // Under exactly one name, a stand-in (docs/SEMANTICS.md), through which it can be moved to a
    // proper name like any other.
    const ls = (await sh(`ls -A '${m.dir}'`)).out.trim().split('\n').sort();
    expect(ls).toHaveLength(2);
    expect(ls[0]).toBe('d');
    expect(ls[1]).toMatch(/^unnamable-[0-9a-f]{12}$/);
    const mv = await sh(`mv '${m.dir}/${ls[1]}' '${m.dir}/d.object'`);
    expect(mv.code, mv.out).toBe(0);
    expect((await sh(`cat '${m.dir}/d.object'`)).out).toBe('the object d');
    const left = await client.send(new ListObjectsV2Command({ Bucket: 'both' }));
    expect((left.Contents ?? []).map((o) => o.Key).sort()).toEqual(['d.object', 'd/x']);
  });
});
