// The worker side of a multi-worker gateway must never leave a client waiting on a message that
// does not come: a claim the primary does not answer, or a followed fill whose leader went
// silent, is given up after its limit and the worker fetches by itself.

import { describe, expect, it, vi } from 'vitest';
import type { Cache } from '../../gateway/cache/cache.ts';
import { Fill, type FillEvent } from '../../gateway/cache/fill.ts';
import { WorkerCoordinator } from '../../gateway/cluster/coordinator.ts';
import type { ToPrimary } from '../../gateway/cluster/messages.ts';
import { UpstreamFailure } from '../../gateway/upstream.ts';

function setup(sent: ToPrimary[] = []) {
  const stalls: string[] = [];
  const ended: Fill[] = [];
  const cache = { disk: {}, endFill: (f: Fill) => ended.push(f) } as unknown as Cache;
  const c = new WorkerCoordinator(cache, (m) => sent.push(m), {
    claimDeadlineMs: 50,
    followSilenceMs: 200,
    onStall: (what, key) => stalls.push(`${what} ${key}`),
  });
  return { c, stalls, ended, sent };
}

describe('WorkerCoordinator limits', () => {
  it('leads by itself when the primary does not answer a claim in time', async () => {
    const { c, stalls } = setup();
    const t = Date.now();
    expect(await c.claim(new Fill('k1'))).toBe('leader');
    expect(Date.now() - t).toBeGreaterThanOrEqual(45);
    expect(stalls).toEqual(['claim k1']);
  });

  it('takes the primary’s answer when it comes in time, and ignores one that comes late', async () => {
    const { c, sent, stalls } = setup();
    const p = c.claim(new Fill('k2'));
    const claim = sent[0] as Extract<ToPrimary, { t: 'claim' }>;
    c.onMessage({ t: 'claimed', id: claim.id, role: 'join' });
    expect(await p).toBe('join');
    const late = c.claim(new Fill('k3'));
    expect(await late).toBe('leader');
    c.onMessage({ t: 'claimed', id: (sent[1] as { id: number }).id, role: 'join' }); // nothing to resolve
    expect(stalls).toEqual(['claim k3']);
  });

  it('gives up a followed fill whose leader says nothing, as a failure the reader may pass through', async () => {
    const { c, stalls, ended } = setup();
    const fill = new Fill('k4');
    c.follow(fill, { t: 'claimed', id: 1, role: 'join', fill: '2/1' });
    await new Promise((r) => setTimeout(r, 120));
    c.onMessage({ t: 'fill', fill: '2/1', ev: { type: 'progress', written: 10 } }); // alive: rearmed
    await new Promise((r) => setTimeout(r, 120));
    expect(fill.state).toBe('pending');
    await new Promise((r) => setTimeout(r, 150));
    expect(fill.state).toBe('failed');
    expect(fill.error).toBeInstanceOf(UpstreamFailure);
    expect((fill.error as UpstreamFailure).passable).toBe(true);
    expect(stalls).toEqual(['follow k4']);
    expect(ended).toEqual([fill]);
  });

  it('a followed fill that ends in time is not touched afterwards', async () => {
    const { c, stalls } = setup();
    const fill = new Fill('k5');
    c.follow(fill, { t: 'claimed', id: 1, role: 'join', fill: '2/1' });
    c.onMessage({ t: 'fill', fill: '2/1', ev: { type: 'pass' } });
    await new Promise((r) => setTimeout(r, 300));
    expect(fill.state).toBe('pass');
    expect(stalls).toEqual([]);
  });

  it('finishes every local fill that follows one fill of another worker, not only the last', async () => {
    const { c, stalls } = setup();
    const first = new Fill('k7');
    const second = new Fill('k7');
    c.follow(first, { t: 'claimed', id: 1, role: 'join', fill: '2/7' });
    c.follow(second, { t: 'claimed', id: 2, role: 'join', fill: '2/7' });
    c.onMessage({ t: 'fill', fill: '2/7', ev: { type: 'pass' } });
    await new Promise((r) => setTimeout(r, 50));
    expect([first.state, second.state]).toEqual(['pass', 'pass']);
    expect(stalls).toEqual([]);
  });

  it('a followed fill whose final file is already gone fails as passable, so its readers fetch themselves', async () => {
    const { c } = setup();
    const fill = new Fill('k8');
    c.follow(fill, { t: 'claimed', id: 1, role: 'join', fill: '2/8' });
    const meta = { key: 'k8', size: 3 } as unknown as Extract<FillEvent, { type: 'done' }>['meta'];
    c.onMessage({ t: 'fill', fill: '2/8', ev: { type: 'done', meta, path: '/nonexistent/estuary-gone', stored: false } });
    await new Promise((r) => setTimeout(r, 50));
    expect(fill.state).toBe('failed');
    expect((fill.error as UpstreamFailure).passable).toBe(true);
  });

  it('a leader reports progress at least every second while bytes arrive, however few', () => {
    vi.useFakeTimers();
    try {
      const { c, sent } = setup();
      const fill = new Fill('k6');
      c.lead(fill, 1);
      fill.progress(100);
      expect(sent.filter((m) => m.t === 'fill')).toEqual([]);
      vi.advanceTimersByTime(1100);
      fill.progress(100);
      const events = sent.filter((m): m is Extract<ToPrimary, { t: 'fill' }> => m.t === 'fill').map((m) => m.ev as FillEvent);
      expect(events).toEqual([{ type: 'progress', written: 200 }]);
    } finally {
      vi.useRealTimers();
    }
  });
});
