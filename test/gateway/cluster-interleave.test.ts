// Node's IPC channel emits every message of one read on its own process.nextTick, and the whole
// nextTick queue runs before any promise continuation. So the primary's answer to a claim and the
// leader's next fill events, read together, are all handled before the claiming request resumes
// from `await`. These tests deliver messages exactly that way (one nextTick each, queued in the
// same tick) through the public Cache.claim path: the follower must see every event, including a
// final one, without waiting for the silence guard.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Cache } from '../../gateway/cache/cache.ts';
import type { DiskStore } from '../../gateway/cache/disk-store.ts';
import type { EntryMeta } from '../../gateway/cache/entry.ts';
import type { FillEvent } from '../../gateway/cache/fill.ts';
import type { MemoryStore } from '../../gateway/cache/memory-store.ts';
import { WorkerCoordinator } from '../../gateway/cluster/coordinator.ts';
import type { ToPrimary, ToWorker } from '../../gateway/cluster/messages.ts';
import { tempDir } from '../helpers/tmp.ts';

/** The guard is short so that a dropped event shows as a failed fill, not as a hung test. */
const GUARD_MS = 400;

function setup() {
  const sent: ToPrimary[] = [];
  const stalls: string[] = [];
  const cache = new Cache({} as MemoryStore, {} as DiskStore);
  const coordinator = new WorkerCoordinator(cache, (m) => sent.push(m), {
    claimDeadlineMs: 5000,
    followSilenceMs: GUARD_MS,
    onStall: (what, key) => stalls.push(`${what} ${key}`),
  });
  cache.coordinator = coordinator;
  return { cache, coordinator, sent, stalls };
}

/** What the channel does with several messages that arrived in one read. */
function deliverInOneRead(c: WorkerCoordinator, messages: ToWorker[]): void {
  for (const m of messages) process.nextTick(() => c.onMessage(m));
}

async function stored(body: string): Promise<{ path: string; meta: EntryMeta }> {
  const path = join(await tempDir('estuary-interleave-'), 'entry');
  await writeFile(path, body);
  const meta = { key: 'k', url: 'http://origin/k', status: 200, headers: {}, requestTime: 0, responseTime: 0, size: body.length };
  return { path, meta: meta as EntryMeta };
}

async function settled(fill: { state: string; changed(): Promise<void> }): Promise<string> {
  while (fill.state === 'pending' || fill.state === 'streaming') await fill.changed();
  return fill.state;
}

describe('a claim answer read together with the leader’s events', () => {
  it('a join answer and the final "done" in one read: the follower completes at once', async () => {
    const { cache, coordinator, sent, stalls } = setup();
    const { path, meta } = await stored('the whole body');
    const claiming = cache.claim('k');
    const id = (sent[0] as Extract<ToPrimary, { t: 'claim' }>).id;
    const done: FillEvent = { type: 'done', meta, path, stored: true };
    const t0 = Date.now();
    deliverInOneRead(coordinator, [
      { t: 'claimed', id, role: 'join', fill: '2/7' },
      { t: 'fill', fill: '2/7', ev: done },
    ]);
    const { fill, leader } = await claiming;
    expect(leader).toBe(false);
    expect(await settled(fill)).toBe('done');
    expect(fill.written).toBe(meta.size);
    expect(Date.now() - t0).toBeLessThan(GUARD_MS);
    expect(stalls).toEqual([]);
  });

  it('a join answer with streaming, progress and a failure in one read: the follower sees the failure', async () => {
    const { cache, coordinator, sent, stalls } = setup();
    const claiming = cache.claim('k');
    const id = (sent[0] as Extract<ToPrimary, { t: 'claim' }>).id;
    deliverInOneRead(coordinator, [
      { t: 'claimed', id, role: 'join', fill: '2/7' },
      { t: 'fill', fill: '2/7', ev: { type: 'failed', proxyError: 'connection_refused', status: 502, message: 'refused' } },
    ]);
    const { fill } = await claiming;
    expect(await settled(fill)).toBe('failed');
    expect(fill.error?.message).toBe('refused');
    expect(stalls).toEqual([]);
  });

  it('a leader answer: the fill reports to the primary from its first event, before the caller resumes', async () => {
    const { cache, coordinator, sent } = setup();
    const claiming = cache.claim('k');
    const id = (sent[0] as Extract<ToPrimary, { t: 'claim' }>).id;
    deliverInOneRead(coordinator, [{ t: 'claimed', id, role: 'leader' }]);
    const local = cache.fills.get('k')!;
    // Something in the same tick (a local reader, an abort) ends the fill before `await` returns.
    process.nextTick(() => local.finish('pass'));
    const { leader } = await claiming;
    expect(leader).toBe(true);
    expect(sent.filter((m) => m.t === 'fill').map((m) => (m as { ev: FillEvent }).ev.type)).toEqual(['pass']);
  });
});
