// lib/dir-lock.ts inside one process; test/gateway/cache-lock.test.ts covers two processes and
// kill -9 with real gateways.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirLocked, lockDir } from '../../lib/dir-lock.ts';
import { tempDir } from '../helpers/tmp.ts';

describe('lockDir', () => {
  it('is exclusive, names its holder, and is free again once released', async () => {
    const dir = join(await tempDir(), 'made', 'on', 'demand');
    const lock = await lockDir(dir, 'thing');
    expect(readFileSync(join(dir, 'thing.pid'), 'utf8')).toMatch(new RegExp(`^${process.pid}\\npid:\\[\\d+\\]\\n$`));
    const second = await lockDir(dir, 'thing').catch((e: unknown) => e);
    expect(second).toBeInstanceOf(DirLocked);
    expect((second as DirLocked).pid).toBe(process.pid);
    lock.release();
    expect(existsSync(join(dir, 'thing.pid'))).toBe(false);
    lock.release(); // twice is harmless
    const again = await lockDir(dir, 'thing');
    again.release();
  });

  it('reports file-system errors as they are', async () => {
    const file = join(await tempDir(), 'a-file');
    writeFileSync(file, 'in the way');
    const err = await lockDir(join(file, 'sub'), 'thing').catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe('ENOTDIR');
  });
});
