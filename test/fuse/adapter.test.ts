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

  it('answers a throw inside an operation, synchronous or not, with an errno instead of ending the process', async () => {
    const mem = new MemoryObjectClient();
    const fs = await makeFs(mem);
    await writeFile(fs, '/f', Buffer.from('hello'));
    const fh = await fs.open('/f', 0);
    const bug = () => {
      throw new TypeError("Cannot read properties of undefined (reading 'size')");
    };
    Object.assign(fs, { readNow: bug, read: bug, chmod: bug });
    const warned: string[] = [];
    const ops = operations(fs, { ...silent, warn: (_o: object, m: string) => warned.push(m) }, new InFlight());
    const call = (op: string, ...args: unknown[]) =>
      new Promise<unknown[]>((resolve) => (ops[op] as (...a: unknown[]) => void)(...args, (...got: unknown[]) => resolve(got)));
    const [readCode] = await call('read', '/f', fh, Buffer.alloc(5), 5, 0);
    expect(readCode).toBeLessThan(0);
    const [chmodCode] = await call('chmod', '/f', 0o600);
    expect(chmodCode).toBeLessThan(0);
    expect(warned.length).toBeGreaterThan(0);
  });
});
