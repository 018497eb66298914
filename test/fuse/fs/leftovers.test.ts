// What a dead mount leaves (staging files, unfinished multipart uploads) is cleaned up at the
// next start, and nothing of a mount that still runs is touched.

import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { holdLock, pidNamespaces } from './lock-holder.ts';
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
    // A mount holds `<name>.lock` for as long as it runs; this one was killed.
    const deadName = `staging-${process.pid + 1}-0123abcd`;
    const killed = await holdLock(cacheDir, deadName);
    await killed.stop('SIGKILL');
    // A running one, here or in a container whose PIDs mean nothing here.
    const runningNames: string[] = [];
    for (const ownNs of pidNamespaces ? [false, true] : [false]) {
      const name = `staging-${runningNames.length + 1}-89abcdef`;
      await holdLock(cacheDir, name, ownNs);
      runningNames.push(name);
    }
    // Older releases: a directory named by PID alone, no lock.
    const legacyDead = `staging-${await deadPid()}`;
    const alive = startChild('sleep', ['60']);
    const legacyAlive = `staging-${alive.pid}`;
    for (const name of [deadName, ...runningNames, legacyDead, legacyAlive]) {
      await mkdir(join(cacheDir, name));
      await writeFile(join(cacheDir, name, `staging-${randomUUID()}`), Buffer.alloc(1234));
    }
    const warned: { obj: object; msg: string }[] = [];
    const fs = await makeFs(new MemoryObjectClient(), {
      cacheDir,
      log: { ...quietLog, warn: (obj, msg) => warned.push({ obj, msg }) },
    });
    const left = await readdir(cacheDir);
    for (const name of [...runningNames, legacyAlive]) expect(left).toContain(name);
    const own = left.filter((n) => n.startsWith(`staging-${process.pid}-`) && !n.includes('.'));
    expect(own).toHaveLength(1);
    // The killed mount's directory and its lock files are gone.
    expect(left.filter((n) => n.startsWith(deadName) || n === legacyDead)).toEqual([]);
    expect(warned).toHaveLength(1);
    expect(warned[0]!.msg).toBe('removed staging files left by a mount that is no longer running');
    expect(warned[0]!.obj).toEqual({
      dirs: expect.arrayContaining([join(cacheDir, deadName), join(cacheDir, legacyDead)]),
      files: 2,
      bytes: 2468,
    });
    await fs.stop();
    expect((await readdir(cacheDir)).filter((n) => n.startsWith(`staging-${process.pid}-`))).toEqual([]);
    await alive.stop('SIGKILL');
  });

  it('two mounts of one process on one cache directory keep their own staging directories', async () => {
    const cacheDir = await tempDir('estuary-leftovers-');
    const first = await makeFs(new MemoryObjectClient(), { cacheDir });
    const second = await makeFs(new MemoryObjectClient(), { cacheDir });
    expect((await readdir(cacheDir)).filter((n) => /^staging-\d+-[0-9a-f]{8}$/.test(n))).toHaveLength(2);
    await first.stop();
    await second.stop();
    expect(await readdir(cacheDir)).toEqual([]);
  });

  it('removes only staging files from a folder named like an older release’s, and keeps the rest', async () => {
    const cacheDir = await tempDir('estuary-leftovers-');
    const mine = `staging-${await deadPid()}`;
    await mkdir(join(cacheDir, mine));
    await writeFile(join(cacheDir, mine, 'thesis.tex'), 'text\n');
    await writeFile(join(cacheDir, mine, `staging-${randomUUID()}`), Buffer.alloc(10));
    await mkdir(join(cacheDir, 'staging-2026'));
    const fs = await makeFs(new MemoryObjectClient(), { cacheDir });
    expect(await readdir(join(cacheDir, mine))).toEqual(['thesis.tex']);
    expect(await readFile(join(cacheDir, mine, 'thesis.tex'), 'utf8')).toBe('text\n');
    expect(await readdir(join(cacheDir, 'staging-2026'))).toEqual([]);
    await fs.stop();
  });

  it('leaves a staging directory whose lock file was removed, and removes lock files without a directory', async () => {
    const cacheDir = await tempDir('estuary-leftovers-');
    // Its lock file removed by hand: its mount may still run, holding the removed file.
    const unlocked = 'staging-12345-0123abcd';
    await mkdir(join(cacheDir, unlocked));
    await writeFile(join(cacheDir, unlocked, `staging-${randomUUID()}`), Buffer.alloc(10));
    // Killed between removing its directory and its lock file.
    const orphan = await holdLock(cacheDir, 'staging-23456-4567abcd');
    await orphan.stop('SIGKILL');
    // A running mount whose empty directory a tmp cleaner removed.
    await holdLock(cacheDir, 'staging-34567-89abcdef');
    const fs = await makeFs(new MemoryObjectClient(), { cacheDir });
    const left = await readdir(cacheDir);
    expect(left).toContain(unlocked);
    expect(left).not.toContain('staging-23456-4567abcd.lock');
    expect(left).toContain('staging-34567-89abcdef.lock');
    expect(left).not.toContain(`${unlocked}.lock`);
    await fs.stop();
  });

  it('leaves a staging directory whose free lock file’s PID file names a running process', async () => {
    const cacheDir = await tempDir('estuary-leftovers-');
    // Its owner is re-taking a lock file that was removed: the new file is not locked yet.
    const name = 'staging-45678-0123abcd';
    const owner = startChild('sleep', ['60']);
    await mkdir(join(cacheDir, name));
    await writeFile(join(cacheDir, `${name}.lock`), '');
    await writeFile(join(cacheDir, `${name}.pid`), `${owner.pid}\n`);
    const fs = await makeFs(new MemoryObjectClient(), { cacheDir });
    expect(await readdir(cacheDir)).toContain(name);
    await fs.stop();
    await owner.stop('SIGKILL');
  });

  it('aborts unfinished multipart uploads under its prefix older than the configured age', async () => {
    const mem = new MemoryObjectClient();
    const old = await mem.createMultipart('run/big.bin');
    const outside = await mem.createMultipart('other/big.bin');
    // Room for a start on a loaded machine: `fresh` must still be younger than the age when the
    // start looks (with 30 ms and 20 ms, a slow start aborted it too).
    await new Promise((r) => setTimeout(r, 600));
    const fresh = await mem.createMultipart('run/live.bin');
    const fs = await makeFs(mem, { prefix: 'run', abortUploadsAfterMs: 500 });
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
