import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile as readFileText, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FaultInjectingClient } from '../../../fuse/s3/fault-client.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, makeFs, readFile, writeFile as writeFsFile } from './make-fs.ts';

describe('write-back journal', () => {
  it('acknowledges close from local disk, serves the file, and uploads once the store is back', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const fs = await makeFs(faults, { writeBack: true });
    faults.fail('put', 'unavailable', Number.POSITIVE_INFINITY);
    faults.fail('createMultipart', 'unavailable', Number.POSITIVE_INFINITY);
    const data = randomBytes(12 * MiB);
    await writeFsFile(fs, '/wb', data);
    expect(mem.objects.has('wb')).toBe(false);
    expect((await fs.getattr('/wb')).size).toBe(data.length);
    expect((await fs.readdir('/')).map((e) => e.name)).toContain('wb');
    expect((await readFile(fs, '/wb')).equals(data)).toBe(true);
    faults.clear();
    await fs.journalSettled();
    expect(mem.objects.get('wb')?.body.equals(data)).toBe(true);
  });

  it('resumes uploads after a crash, from what the journal left on disk', async () => {
    const cacheDir = await tempDir('estuary-journal-');
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const first = await makeFs(faults, { writeBack: true, cacheDir });
    faults.fail('*', 'unavailable', Number.POSITIVE_INFINITY);
    await writeFsFile(first, '/a', Buffer.from('one'));
    await writeFsFile(first, '/b', Buffer.from('two'));
    first.journal!.stop();
    expect((await readdir(join(cacheDir, 'journal'))).filter((n) => n.endsWith('.json'))).toHaveLength(2);

    const second = await makeFs(mem, { writeBack: true, cacheDir });
    await second.journalSettled();
    expect(mem.objects.get('a')?.body.toString()).toBe('one');
    expect(mem.objects.get('b')?.body.toString()).toBe('two');
    expect(await readdir(join(cacheDir, 'journal'))).toEqual(['lock']);
    await second.journal!.close();
    expect(await readdir(join(cacheDir, 'journal'))).toEqual([]);
  });

  it('refuses a journal another running process owns, and takes over one whose owner died', async () => {
    const cacheDir = await tempDir('estuary-journal-');
    await mkdir(join(cacheDir, 'journal'));
    const lock = join(cacheDir, 'journal', 'lock');
    const owner = startChild('sleep', ['60']);
    await writeFile(lock, `${owner.pid}\n`);
    await expect(makeFs(new MemoryObjectClient(), { writeBack: true, cacheDir })).rejects.toThrow(
      /ESTUARY_FS_JOURNAL_IN_USE|in use by process \d+; give each mount its own --cache-dir/,
    );
    await owner.stop('SIGKILL');
    const fs = await makeFs(new MemoryObjectClient(), { writeBack: true, cacheDir });
    expect((await readFileText(lock, 'utf8')).trim()).toBe(String(process.pid));
    await fs.journal!.close();
  });

  it('uploads only the newest version and appends to a journaled file', async () => {
    const mem = new MemoryObjectClient();
    const faults = new FaultInjectingClient(mem);
    const fs = await makeFs(faults, { writeBack: true });
    faults.fail('put', 'unavailable', Number.POSITIVE_INFINITY);
    await writeFsFile(fs, '/v', Buffer.from('first'));
    await writeFsFile(fs, '/v', Buffer.from('second'));
    const fh = await fs.open('/v', 1);
    await fs.write(fh, Buffer.from('+more'), 6);
    await fs.flush(fh);
    await fs.release(fh);
    faults.clear();
    await fs.journalSettled();
    expect(mem.objects.get('v')?.body.toString()).toBe('second+more');
    expect(mem.calls.get('put')).toBe(1);
  });
});
