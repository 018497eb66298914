// kill -9 of a mount while a large file streams over an existing object, at many points: parts
// sent (each also copied to the staging file with direct I/O), after a seek back moved the file to
// that copy, while more is written into it. docs/SEMANTICS.md, "write, everything else": "nothing
// reaches the bucket before close() or fsync()" — so the bucket keeps the old object byte for
// byte; and the staging leftovers of the killed mount are removed at the next start on the same
// --cache-dir (fuse/fs/leftovers.ts).

import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const MiB = 2 ** 20;

/** A writer that streams MiB blocks into `path`, seeking back once after `seekAfter` MiB. */
const WRITER = (path: string, seekAfter: number) => `
import os, sys, time
fd = os.open('${path}', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
b = bytes(range(256)) * 4096
for i in range(200):
    os.write(fd, b)
    if i == ${seekAfter}:
        os.pwrite(fd, b'Z' * 4097, 4095)
    print(i, flush=True)
    time.sleep(0.01)
`;

const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount: kill -9 during a large streamed write', () => {
  for (const [killAt, seekAfter] of [[3, 999], [12, 999], [12, 8], [25, 8], [40, 30]] as const) {
    it(`killed after ${killAt} MiB${seekAfter < 999 ? `, seek back after ${seekAfter}` : ''}: old object stands, leftovers cleaned`, async () => {
      const server = await startS3rver({ buckets: ['data'] });
      const old = Buffer.alloc(7 * MiB + 3, 'o');
      const s3 = s3Client(server);
      await s3.send(new PutObjectCommand({ Bucket: 'data', Key: 'big', Body: old }));
      const cache = await tempDir('estuary-cache-');
      const args = ['--cache-dir', cache, '--part-size', '5MiB'];
      const m = await mountBucket(server, 'data', args);
      const script = `${await tempDir('estuary-w-')}/w.py`;
      await sh(`cat > '${script}' <<'PY'\n${WRITER(`${m.dir}/big`, seekAfter)}\nPY`);
      const writer = sh(`timeout 40 python3 '${script}'`, undefined, 50_000);
      // Wait until the staging copy holds about killAt MiB (or the writer has written that much).
      const deadline = Date.now() + 30_000;
      for (;;) {
        const du = await sh(`du -sbc '${cache}'/staging-*/ 2>/dev/null | tail -1 | cut -f1`);
        if (Number(du.out.trim() || 0) >= (killAt - 5) * MiB && killAt > 5) break;
        if (killAt <= 5 && Date.now() > deadline - 28_000) break;
        if (Date.now() > deadline) throw new Error('the staging copy never grew');
        await new Promise((r) => setTimeout(r, 50));
      }
      m.child.proc.kill('SIGKILL');
      await m.child.exited;
      await sh(`fusermount -uz '${m.dir}'`);
      await writer;
      const got = await s3
        .send(new GetObjectCommand({ Bucket: 'data', Key: 'big' }))
        .then(async (o) => Buffer.from(await o.Body!.transformToByteArray()));
      expect(md5(got), `bucket has ${got.length} bytes, the old object was ${old.length}`).toBe(md5(old));
      // The next start on the same cache directory removes the killed mount's staging files.
      await mountBucket(server, 'data', args);
      const left = (
        await sh(
          `find '${cache}' -regextype posix-extended -regex '.*/staging-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'`,
        )
      ).out.trim();
      expect(left, 'staging files of the killed mount').toBe('');
    }, 60_000);
  }
});
