// An object replaced behind the mount's back while a handle has it open for reading: the handle
// must not hand out old and new bytes side by side as one file.

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const SIZE = 6 * 2 ** 20;

// Reads a little at the start, signals (creates the flag file), waits until the flag is gone,
// then reads elsewhere: each pread is a seek, so none of it was fetched ahead.
const READER = `
import os, sys, time
fd = os.open(sys.argv[1] + "/f", os.O_RDONLY)
out = [os.pread(fd, 100, 0)[:1].decode()]
open(sys.argv[2], "w").close()
while os.path.exists(sys.argv[2]): time.sleep(0.05)
for off in (${SIZE - 100_000}, ${3 * 2 ** 20}, ${SIZE - 4096}):
    try:
        out.append(os.pread(fd, 4096, off)[:1].decode())
    except OSError as e:
        out.append("errno%d" % e.errno)
print(" ".join(out))
`;

describe.runIf(fuse.ok)('mount: an object replaced while open for reading', () => {
  it('never mixes the old and the new content in one open file', async () => {
    const server = await startS3rver({ buckets: ['mix'] });
    const client = s3Client(server);
    await client.send(new PutObjectCommand({ Bucket: 'mix', Key: 'f', Body: Buffer.alloc(SIZE, 'A') }));
    const m = await mountBucket(server, 'mix');
    const flag = join(await tempDir('estuary-mix-'), 'flag');
    const reader = sh(`python3 -c '${READER}' '${m.dir}' '${flag}'`);
    while (!existsSync(flag)) await sleep(50);
    await client.send(new PutObjectCommand({ Bucket: 'mix', Key: 'f', Body: Buffer.alloc(SIZE, 'B') }));
    await rm(flag);
    const r = await reader;
    expect(r.code, r.out).toBe(0);
    const seen = r.out.trim().split(' ');
    // Old bytes throughout, or an error once the object changed; never B after A.
    expect(seen[0]).toBe('A');
    expect(seen, `bytes seen at the start and then at three offsets: ${r.out}`).not.toContain('B');
    // Bytes of a version no longer there are refused with ESTALE (docs/SEMANTICS.md, read).
    for (const s of seen.slice(1)) expect(['A', 'errno116']).toContain(s);
  });
});
