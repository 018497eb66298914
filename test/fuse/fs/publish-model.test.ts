// A reference model of what the bucket may hold while files are written: random sequences of
// writes (mostly in order, sometimes back into bytes already sent as parts), truncates, flushes
// (close or fsync) and whole-file reads through one handle, run against the filesystem layer on
// the in-memory store with 5 MiB parts. After every step the bucket must hold exactly what the
// last flush published (or what it held before the file was opened), never a stream's unfinished
// bytes; at every flush, exactly the model's content. ESTUARY_RANDOM_SEED replays a failure.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { seeded } from '../../../lib/seeded.ts';
import { MiB, makeFs } from './make-fs.ts';

const SEED = Number(process.env.ESTUARY_RANDOM_SEED ?? Date.now() % 1_000_000);
const STEPS = 40;

describe('what the bucket holds before close (reference model)', () => {
  it(`never holds a stream's unfinished bytes (seed ${SEED})`, async () => {
    const random = seeded(SEED);
    const pick = (n: number) => Math.floor(random() * n);
    const mem = new MemoryObjectClient();
    // A budget of 24 MiB keeps the first part at 5 MiB, so parts leave early.
    const fs = await makeFs(mem, { memoryLimit: 24 * MiB, firstPartSize: 5 * MiB });
    const source = randomBytes(16 * MiB);
    for (const existing of [true, false]) {
      const key = existing ? 'old' : 'new';
      let published: Buffer | undefined = existing ? randomBytes(MiB) : undefined;
      if (published) await mem.put(key, published);
      let content = Buffer.alloc(0);
      const fh = existing ? await fs.open(`/${key}`, 1 | 0o1000) : await fs.create(`/${key}`, 0o644);
      for (let step = 0; step < STEPS; step++) {
        const r = random();
        if (r < 0.6) {
          // In order, a few MiB at a time; now and then back into what was written.
          const back = content.length > 0 && random() < 0.2;
          const at = back ? pick(content.length) : content.length;
          const len = back ? 1 + pick(64 * 1024) : 1 + pick(3 * MiB);
          if (at + len > source.length) continue;
          const data = source.subarray(at, at + len);
          await fs.write(fh, data, at);
          const next = Buffer.alloc(Math.max(content.length, at + len));
          content.copy(next);
          data.copy(next, at);
          content = next;
        } else if (r < 0.7 && content.length > 0) {
          const size = pick(content.length);
          await fs.ftruncate(fh, size);
          content = content.subarray(0, size);
        } else if (r < 0.75) {
          await fs.flush(fh);
          published = content;
          expect(mem.objects.get(key)?.body.equals(content), `flush at step ${step}`).toBe(true);
        } else if (r < 0.8) {
          expect((await fs.read(fh, 0, content.length + 1)).equals(content), `read at step ${step}`).toBe(true);
        }
        const stored = mem.objects.get(key)?.body;
        expect(stored?.length, `step ${step}`).toBe(published?.length);
        if (published) expect(stored!.equals(published), `step ${step}`).toBe(true);
      }
      await fs.flush(fh);
      await fs.release(fh);
      expect(mem.objects.get(key)?.body.equals(content)).toBe(true);
      expect(mem.uploads.size).toBe(0);
    }
  }, 60_000);
});
