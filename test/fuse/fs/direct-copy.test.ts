// fuse/fs/aligned-buffer.ts, StagingFile.writeThrough and the spool: the local copy of sent parts
// goes to disk with direct I/O from page-aligned part buffers, and the copy read back is the file
// exactly, whichever way each piece was written (direct, through the page cache after a refusal,
// a last part cut at a block boundary, the unsent rest, writes past the end and a truncate after).

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alignedBuffer } from '../../../fuse/fs/aligned-buffer.ts';
import { BufferPool } from '../../../fuse/fs/buffer-pool.ts';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { Spool } from '../../../fuse/fs/spool.ts';
import type { StagingSettings } from '../../../fuse/fs/staging-file.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;

const settings = (dir: string): StagingSettings => ({
  client: new MemoryObjectClient(),
  pool: new BufferPool(new MemoryBudget(64 * MiB)),
  dir,
  limit: 64 * MiB,
  firstPartSize: MiB,
  maxInFlight: 2,
});

/** Writes `buf` to a new file in `dir` opened with O_DIRECT; answers the error code, if any. */
async function directWrite(dir: string, buf: Buffer): Promise<string | undefined> {
  const fh = await open(join(dir, `direct-${randomBytes(4).toString('hex')}`), constants.O_RDWR | constants.O_CREAT | constants.O_DIRECT, 0o600);
  try {
    await fh.write(buf, 0, buf.length, 0);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  } finally {
    await fh.close();
  }
}

describe('the local copy of sent parts', () => {
  it('comes from part buffers that direct I/O accepts, where a plain Buffer is refused', async () => {
    const dir = await tempDir('estuary-direct-');
    expect(await directWrite(dir, Buffer.allocUnsafeSlow(MiB))).toBe('EINVAL');
    expect(await directWrite(dir, alignedBuffer(4 * MiB))).toBeUndefined();
    const pool = new BufferPool(new MemoryBudget(8 * MiB));
    const part = (await pool.take(4 * MiB))!;
    expect(await directWrite(dir, part)).toBeUndefined();
    pool.give(part);
  });

  it('are plain buffers under an address-space limit, where 8 GiB reservations would crowd out the rest', async () => {
    const dir = await tempDir('estuary-direct-');
    const module = resolve(import.meta.dirname, '../../../fuse/fs/aligned-buffer.ts');
    const script = `
      import { open } from 'node:fs/promises';
      import { constants } from 'node:fs';
      import { alignedBuffer } from ${JSON.stringify(module)};
      const fh = await open(${JSON.stringify(join(dir, 'limited'))}, constants.O_RDWR | constants.O_CREAT | constants.O_DIRECT, 0o600);
      const buf = alignedBuffer(${4 * MiB});
      const code = await fh.write(buf, 0, ${4 * MiB}, 0).then(() => 'ok', (err) => err.code);
      await fh.close();
      // A WebAssembly memory's buffer cannot be transferred; a plain one can. A plain buffer may
      // still start on a page boundary by chance, so the write alone does not tell them apart.
      let kind = 'plain';
      try { buf.buffer.transfer(); } catch { kind = 'reserved'; }
      console.log(kind + ' ' + code);`;
    const run = (limit: string) =>
      execFileSync('bash', ['-c', `${limit} exec "$0" --input-type=module -e "$1"`, process.execPath, script], {
        encoding: 'utf8',
      }).trim();
    expect(run('')).toBe('reserved ok');
    expect(run('ulimit -v 16000000;')).toMatch(/^plain /);
  });

  it('reads back exactly: direct parts, a last part cut at a block, the rest, then changes', async () => {
    const dir = await tempDir('estuary-direct-');
    const spool = new Spool(settings(dir), 'k');
    const content = randomBytes(3 * MiB + 4 * 4096 + 5000);
    const part = (from: number, to: number) => {
      const buf = alignedBuffer(4 * MiB);
      content.copy(buf, 0, from, to);
      return buf.subarray(0, to - from);
    };
    await spool.keep(part(0, MiB), 0);
    await spool.keep(part(MiB, 2 * MiB), MiB);
    // The last part: whole blocks directly, the 904 bytes after them through the page cache.
    await spool.keep(part(2 * MiB, 3 * MiB + 4 * 4096 + 904), 2 * MiB);
    const sent = 3 * MiB + 4 * 4096 + 904;
    const file = await spool.take(content.subarray(sent), sent);
    try {
      expect(file.size).toBe(content.length);
      expect((await file.read(0, content.length)).equals(content)).toBe(true);
      // A write past the end leaves a hole of zeros; a truncate then cuts into it.
      await file.write(Buffer.from('tail'), content.length + 8192);
      const hole = await file.read(content.length, 8192);
      expect(hole.equals(Buffer.alloc(8192))).toBe(true);
      await file.truncate(MiB + 10);
      expect((await file.read(0, 2 * MiB)).equals(content.subarray(0, MiB + 10))).toBe(true);
    } finally {
      await file.close();
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('goes through the page cache for a part the kernel refuses directly, and the parts after it', async () => {
    const dir = await tempDir('estuary-direct-');
    const spool = new Spool(settings(dir), 'k');
    const content = randomBytes(3 * MiB);
    await spool.keep(Buffer.from(content.subarray(0, MiB)), 0);
    const aligned = alignedBuffer(4 * MiB);
    content.copy(aligned, 0, MiB, 2 * MiB);
    await spool.keep(aligned.subarray(0, MiB), MiB);
    const file = await spool.take(content.subarray(2 * MiB), 2 * MiB);
    try {
      expect((await file.read(0, content.length)).equals(content)).toBe(true);
    } finally {
      await file.close();
    }
});
});
