// What a dead mount leaves (staging files, unfinished multipart uploads) is cleaned up at the
// next start, and nothing of a mount that still runs is touched.

import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { makeFs, quietLog } from './make-fs.ts';

/** The PID of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = startChild('true', []);
  await child.exited;
  return child.pid;
}

describe('leftovers of a mount that died', () => {
  it('removes the staging files of dead mounts, says so, and leaves a running mount’s alone', async () => {
    const cacheDir = await tempDir('estuary-leftovers-');
    const dead = join(cacheDir, `staging-${await deadPid()}`);
    const alive = startChild('sleep', ['60']);
    const running = join(cacheDir, `staging-${alive.pid}`);
    for (const dir of [dead, running]) {
      await mkdir(dir);
      await writeFile(join(dir, 'staging-x'), Buffer.alloc(1234));
    }
    const warned: { obj: object; msg: string }[] = [];
    const fs = await makeFs(new MemoryObjectClient(), {
      cacheDir,
      log: { ...quietLog, warn: (obj, msg) => warned.push({ obj, msg }) },
    });
    const left = await readdir(cacheDir);
    expect(left).toContain(`staging-${alive.pid}`);
    expect(left).toContain(`staging-${process.pid}`);
    expect(left).not.toContain(dead.slice(cacheDir.length + 1));
    expect(warned).toEqual([
      {
        obj: { dirs: [dead], files: 1, bytes: 1234 },
        msg: 'removed staging files left by a mount that is no longer running',
      },
    ]);
    await fs.stop();
    expect(await readdir(cacheDir)).not.toContain(`staging-${process.pid}`);
    await alive.stop('SIGKILL');
  });

  it('aborts unfinished multipart uploads under its prefix older than the configured age', async () => {
    const mem = new MemoryObjectClient();
    const old = await mem.createMultipart('run/big.bin');
    const outside = await mem.createMultipart('other/big.bin');
    await new Promise((r) => setTimeout(r, 30));
    const fresh = await mem.createMultipart('run/live.bin');
    const fs = await makeFs(mem, { prefix: 'run', abortUploadsAfterMs: 20 });
    await fs.abortingUploads;
    expect([...mem.uploads.keys()].sort()).toEqual([outside, fresh].sort());
    expect(mem.uploads.has(old)).toBe(false);
  });

  it('aborts none when the age is 0', async () => {
    const mem = new MemoryObjectClient();
    await mem.createMultipart('big.bin');
    const fs = await makeFs(mem, { abortUploadsAfterMs: 0 });
    await fs.abortingUploads;
    expect(mem.uploads.size).toBe(1);
  });
});
