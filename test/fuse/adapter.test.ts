// The FUSE operation table without a mount: what each callback hands to fuse-native.

import { describe, expect, it } from 'vitest';
import { InFlight, operations } from '../../fuse/adapter.ts';
import { MemoryObjectClient } from '../../fuse/s3/memory-client.ts';
import { makeFs, writeFile } from './fs/make-fs.ts';

const silent = { trace: () => {}, debug: () => {}, warn: () => {} };
const S_IFMT = 0o170000;

describe('the FUSE operation table', () => {
  it('lists a directory with each entry’s attributes, so the kernel knows every entry’s type', async () => {
    const mem = new MemoryObjectClient();
    await mem.put('d/inner', Buffer.from('x'));
    const fs = await makeFs(mem);
    await writeFile(fs, '/f', Buffer.from('hello'));
    const ops = operations(fs, silent, new InFlight());
    const readdir = ops.readdir as (p: string, cb: (...args: unknown[]) => void) => void;
    const [code, names, stats] = await new Promise<unknown[]>((resolve) =>
      readdir('/', (...args) => resolve(args)),
    );
    expect(code).toBe(0);
    expect(names).toEqual(['.', '..', 'd', 'f']);
    const types = (stats as { mode: number; size: number }[]).map((s) => s.mode & S_IFMT);
    expect(types).toEqual([0o040000, 0o040000, 0o040000, 0o100000]);
    expect((stats as { size: number }[])[3]!.size).toBe(5);
  });
});
