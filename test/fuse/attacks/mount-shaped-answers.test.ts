// What reaches a reader through a real mount when a proxy in front of the store shapes its
// answers: early hints (103) before each answer, and a 206 turned into a 200 that still carries
// only the range. The promise (docs/SEMANTICS.md, "read"): a read returns exactly the object's
// bytes or fails with an errno; a file is never silently shorter than the object.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { open, readFile } from 'node:fs/promises';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { startS3rver } from '../../helpers/s3rver.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { startShapingRelay } from './shaping-relay.ts';

const fuse = fuseAvailable();
const MiB = 2 ** 20;
const BODY = randomBytes(5 * MiB + 12345);

async function storeWithFile() {
  const s3 = await startS3rver({ buckets: ['shaped'] });
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  await client.send(new PutObjectCommand({ Bucket: 'shaped', Key: 'data.bin', Body: BODY }));
  client.destroy();
  return s3;
}

describe.runIf(fuse.ok)('answers shaped by a proxy, read through the mount', () => {
  it('behind a proxy that sends 103 Early Hints, cat reads the whole file', async () => {
    // RFC 9110 §15.2: a client must parse 1xx answers it did not ask for; the AWS SDK's client
    // (listing, HEAD) does. Today every read of the data path fails with EIO.
    const s3 = await storeWithFile();
    const relay = await startShapingRelay(s3, { earlyHints: true });
    const m = await mountBucket(relay.server, 'shaped');
    const r = await sh(`cat '${m.dir}/data.bin' > /dev/null`);
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
    expect((await readFile(`${m.dir}/data.bin`)).equals(BODY)).toBe(true);
  }, 60_000);

  it('a proxy that answers a ranged GET with a 200 of the range only never makes the file shorter', async () => {
    // The object is 5 MiB; the first GET (bytes 0-1048575) comes back as a 200 of 1 MiB. Taking
    // that for the whole object shrinks the file to 1 MiB for cat, ls and every later open.
    // Expected: the read fails (EIO) or returns all 5 MiB; cat never exits 0 with less.
    const s3 = await storeWithFile();
    const relay = await startShapingRelay(s3, { rangeAs200: true });
    const m = await mountBucket(relay.server, 'shaped');
    const before = await sh(`stat -c %s '${m.dir}/data.bin'`);
    expect(before.out.trim()).toBe(String(BODY.length));
    const r = await sh(`cat '${m.dir}/data.bin' | wc -c; echo "status \${PIPESTATUS[0]}"`);
    const [bytes, status] = [Number(/^\s*(\d+)/.exec(r.out)?.[1]), /status (\d+)/.exec(r.out)?.[1]];
    if (status === '0') expect(bytes, 'cat exited 0 with fewer bytes than the object').toBe(BODY.length);
    const after = await sh(`stat -c %s '${m.dir}/data.bin'`);
    expect(after.out.trim(), 'the size the mount shows after the read').toBe(String(BODY.length));
  }, 60_000);
});

describe.runIf(fuse.ok)('an object that turns shorter while open, on a store without ETags', () => {
  it('without ETags (Last-Modified names the version), cat reads the whole file', async () => {
    // Its GETs ask with If-Unmodified-Since and compare Last-Modified: an unchanged object must
    // read whole, not fail as replaced.
    const s3 = await storeWithFile();
    const relay = await startShapingRelay(s3, { noEtag: true });
    const m = await mountBucket(relay.server, 'shaped');
    expect((await readFile(`${m.dir}/data.bin`)).equals(BODY)).toBe(true);
    // A seek: a GET of its own, from a readahead that starts again there.
    const fh = await open(`${m.dir}/data.bin`, 'r');
    const at = 3 * MiB + 4096;
    const { bytesRead, buffer } = await fh.read(Buffer.alloc(512 * 1024), 0, 512 * 1024, at);
    await fh.close();
    expect(bytesRead).toBe(512 * 1024);
    expect(buffer.equals(BODY.subarray(at, at + 512 * 1024))).toBe(true);
  }, 60_000);

  it('a read across the short GET returns the object\'s bytes or fails, never other memory', async () => {
    // The store sends no ETag; after open, one GET answers as if the object had 3 MiB (another
    // client replaced it by a shorter one, then back). A read that spans the end of that GET and
    // the next one must not return bytes the mount never received.
    const s3 = await storeWithFile();
    const relay = await startShapingRelay(s3, { noEtag: true });
    const m = await mountBucket(relay.server, 'shaped');
    const script = `
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
x = 22 * 131072
os.pread(fd, 4096, 0)
os.pread(fd, 4096, x)
sys.stdout.buffer.write(os.pread(fd, 131072, x + 1048576 - 65536))
`;
    relay.shaping.shrinkOnce = 3 * MiB;
    const out = await new Promise<{ code: number | null; data: Buffer; err: string }>((resolve) => {
      const child = spawn('python3', ['-c', script, `${m.dir}/data.bin`]);
      const parts: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (c: Buffer) => parts.push(c));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.on('close', (code) => resolve({ code, data: Buffer.concat(parts), err }));
    });
    const at = 22 * 131072 + MiB - 65536;
    if (out.code === 0) {
      const head = out.data.subarray(0, 65536);
      console.log(`zeros in the first 64 KiB: ${head.filter((b) => b === 0).length}; found in the object at: ${BODY.indexOf(head.subarray(0, 64))}; second half is the object's: ${out.data.subarray(65536).equals(BODY.subarray(at + 65536, at + 131072))}`);
      const want = BODY.subarray(at, at + out.data.length);
      const firstBad = out.data.findIndex((b, i) => b !== want[i]);
      expect(firstBad, `${out.data.length} bytes read; first byte that is not the object's at +${firstBad}`).toBe(-1);
      expect(out.data.length).toBe(131072);
    }
  }, 60_000);
});
