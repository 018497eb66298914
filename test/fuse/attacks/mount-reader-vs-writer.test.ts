// A file truncated or overwritten through the mount while another descriptor reads it. As on a
// local filesystem (docs/SEMANTICS.md, "read": a reader "sees every change" made through this
// mount), the reader sees the new content from then on: after a truncate to 1000 bytes a read
// past that returns nothing, and after an overwrite a read returns the new bytes, never the old
// ones mixed into the new length.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';

const fuse = fuseAvailable();
const MiB = 2 ** 20;

const SCRIPT = `
import os, sys, subprocess
mnt, truth = sys.argv[1], sys.argv[2]
old = open(f"{truth}/old", "rb").read()
new = open(f"{truth}/new", "rb").read()
out = []
fd = os.open(f"{mnt}/f", os.O_RDONLY)
out.append(("first MiB", os.pread(fd, 1 << 20, 0) == old[:1 << 20]))
subprocess.run(["truncate", "-s", "1000", f"{mnt}/f"], check=True)
out.append(("after truncate, read at 2 MiB is empty", os.pread(fd, 4096, 2 << 20) == b""))
out.append(("after truncate, read at 0 is the first 1000 bytes", os.pread(fd, 4096, 0) == old[:1000]))
subprocess.run(["cp", f"{truth}/new", f"{mnt}/f"], check=True)
got = os.pread(fd, len(new) + 4096, 0)
out.append((f"after overwrite, the new content ({len(got)} bytes, want {len(new)})", got == new))
got = os.pread(fd, 1 << 20, 3 << 20)
out.append(("after overwrite, read at 3 MiB is the new bytes", got == new[3 << 20:4 << 20]))
os.close(fd)
for what, ok in out: print(("ok " if ok else "BAD ") + what)
`;

describe.runIf(fuse.ok)('a reader while the file is truncated and overwritten through the mount', () => {
  it('sees the truncation and then the new content', async () => {
    const s3 = await startS3rver({ buckets: ['rw'] });
    const truth = await tempDir('estuary-atk-rw-');
    const old = randomBytes(8 * MiB + 11);
    const neu = randomBytes(6 * MiB + 5);
    await writeFile(`${truth}/old`, old);
    await writeFile(`${truth}/new`, neu);
    await writeFile(`${truth}/check.py`, SCRIPT);
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    await client.send(new PutObjectCommand({ Bucket: 'rw', Key: 'f', Body: old }));
    client.destroy();
    const m = await mountBucket(s3, 'rw');
    const r = await sh(`python3 '${truth}/check.py' '${m.dir}' '${truth}'`);
    expect(r.out.split('\n').filter((l) => !l.startsWith('ok ') && l !== '')).toEqual([]);
  }, 60_000);
});
