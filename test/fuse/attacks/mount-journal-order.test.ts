// Attack on the write-back journal's order after a restart (fuse/fs/journal.ts). docs/SEMANTICS.md,
// "Write-back": "A newer entry for the same key replaces an older one that has not been sent", and
// "After a crash or kill -9, mounting again with the same --cache-dir resumes the uploads". Which
// entry is newer is known in memory (the queue's order), but on disk only `createdMs`, the wall
// clock at close(). Two closes of one file within the same millisecond, or across a step of the
// clock backwards (NTP, a VM resumed), leave entries whose on-disk order says nothing or the
// opposite. After a restart the older content is then taken for the newest: it is what the mount
// shows, it is uploaded, and the acknowledged newer content is dropped as "superseded".
// Expected: after a restart the content of the last close() to return wins, whatever the clock did.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { BufferPool } from '../../../fuse/fs/buffer-pool.ts';
import { Journal } from '../../../fuse/fs/journal.ts';
import { MemoryBudget } from '../../../fuse/fs/memory-budget.ts';
import type { StagingFile } from '../../../fuse/fs/staging-file.ts';
import { FaultInjectingClient } from '../../../fuse/s3/fault-client.ts';
import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import type { ObjectClient } from '../../../fuse/s3/object-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);
afterEach(() => vi.restoreAllMocks());

const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const identity = { endpoint: 'http://127.0.0.1:9', bucket: 'kek', prefix: '' };

function journalOn(dir: string, client: ObjectClient): Journal {
  const pool = new BufferPool(new MemoryBudget(64 * 2 ** 20));
  return new Journal(dir, { client, pool, firstPartSize: 5 * 2 ** 20, maxInFlight: 2 }, quiet, identity);
}

/** What the staging file of a closed file hands the journal: its content, moved into place. */
async function closedFile(scratch: string, content: string): Promise<StagingFile> {
  const path = join(scratch, `s-${Math.random().toString(16).slice(2)}`);
  await writeFile(path, content);
  const { rename } = await import('node:fs/promises');
  return {
    size: Buffer.byteLength(content),
    handOver: (target: string) => rename(path, target),
  } as unknown as StagingFile;
}

/** Two closes of `data.txt` (old, then new) while the store is down, then a crash and a restart. */
async function closeTwiceCrashRestart(clock: (call: number, start: number) => number) {
  const base = await tempDir('estuary-atk-journal-');
  const dir = join(base, 'journal');
  const scratch = join(base, 'scratch');
  await mkdir(scratch, { recursive: true });

  const down = new FaultInjectingClient(new MemoryObjectClient());
  down.fail('*', 'unavailable', Number.POSITIVE_INFINITY);
  const first = journalOn(dir, down);
  await first.open();
  const start = Date.now();
  let call = 0;
  const now = vi.spyOn(Date, 'now').mockImplementation(() => clock(call++, start));
  await first.add('data.txt', await closedFile(scratch, 'old content'), {});
  await first.add('data.txt', await closedFile(scratch, 'NEW content'), {});
  now.mockRestore();
  // Before the crash, the mount itself knows which one is current.
  const before = first.pending('data.txt')!;
  expect(await readFile(first.dataPath(before.id), 'utf8')).toBe('NEW content');
  first.stop(); // kill -9: nothing more is uploaded, the lock goes with the process

  const store = new MemoryObjectClient();
  const second = journalOn(dir, store);
  await second.open();
  const shown = second.pending('data.txt')!;
  const shownContent = await readFile(second.dataPath(shown.id), 'utf8');
  await second.settled();
  await second.close();
  return { shownContent, stored: store.objects.get('data.txt')?.body.toString() };
}

describe('the write-back journal after a restart, when the clock did not move forward between two closes', () => {
  it('keeps the newer of two closes made within the same millisecond', async () => {
    // Both closes read the same Date.now(), as two quick closes on a coarse or busy clock do.
    // Which of the two then comes first on disk is chance (directory order); ten rounds.
    const rounds = [];
    for (let i = 0; i < 10; i++) rounds.push(await closeTwiceCrashRestart((_, start) => start));
    expect(rounds.map((r) => r.shownContent)).toEqual(Array(10).fill('NEW content'));
    expect(rounds.map((r) => r.stored)).toEqual(Array(10).fill('NEW content'));
  }, 30_000);

  it('keeps the newer of two closes across a 2 s step of the clock backwards', async () => {
    // The first add() reads the clock twice (id and createdMs); from the third read on, it is 2 s back.
    const r = await closeTwiceCrashRestart((call, start) => (call >= 2 ? start - 2000 : start));
    expect(r.shownContent).toBe('NEW content');
    expect(r.stored).toBe('NEW content');
  }, 20_000);
});
