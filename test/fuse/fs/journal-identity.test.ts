// The write-back journal's identity file (fuse/fs/journal.ts) and a user name or password in the
// endpoint: never stored, never printed, and no reason to strand files an older release kept.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BufferPool } from '../../../fuse/fs/buffer-pool.ts';
import { Journal, type JournalIdentity } from '../../../fuse/fs/journal.ts';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const quiet = { error() {}, warn() {}, info() {}, debug() {} };

function journalOn(dir: string, identity: JournalIdentity): Journal {
  const pool = new BufferPool(new MemoryBudget(64 * 2 ** 20));
  const settings = { client: new MemoryObjectClient(), pool, firstPartSize: 5 * 2 ** 20, maxInFlight: 2 };
  return new Journal(dir, settings, quiet, identity);
}

describe('the journal identity and user info in the endpoint', () => {
  it('stores the endpoint without its user name and password', async () => {
    const dir = join(await tempDir('estuary-journal-id-'), 'journal');
    const journal = journalOn(dir, { endpoint: 'http://alice:s3cr3t@127.0.0.1:9', bucket: 'kek', prefix: '' });
    await journal.open();
    await journal.close();
    const stored = await readFile(join(dir, 'identity'), 'utf8');
    expect(stored).not.toMatch(/alice|s3cr3t/);
    expect(JSON.parse(stored)).toMatchObject({ endpoint: 'http://127.0.0.1:9' });
  });

  it('is claimed by the same store without the password an older release stored, and never prints it', async () => {
    const dir = join(await tempDir('estuary-journal-id-'), 'journal');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const old = { endpoint: 'http://alice:s3cr3t@127.0.0.1:9', bucket: 'kek', prefix: '' };
    await writeFile(join(dir, 'identity'), JSON.stringify(old));
    const same = journalOn(dir, { endpoint: 'http://127.0.0.1:9', bucket: 'kek', prefix: '' });
    await same.open();
    await same.close();
    const other = journalOn(dir, { endpoint: 'http://127.0.0.1:9', bucket: 'other', prefix: '' });
    await writeFile(join(dir, 'identity'), JSON.stringify(old));
    const err = await other.open().then(() => undefined, (e: Error) => e);
    expect((err as { code?: string })?.code).toBe('ESTUARY_FS_JOURNAL_IDENTITY');
    expect(err?.message).toContain('http://***@127.0.0.1:9');
    expect(err?.message).not.toMatch(/alice|s3cr3t/);
  });
});
