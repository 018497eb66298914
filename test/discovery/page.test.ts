// The discovery page in every state an operator meets: healthy, late, failing, clock drift, not
// checked, refused heartbeats, and empty. Rendered from real registry entries, no network.

import { describe, expect, it } from 'vitest';
import { agentCommand, renderCachePage, renderPage, type PageFacts } from '../../discovery/page.ts';
import { holdings, size, triage } from '../../discovery/page-model.ts';
import { type CacheEntry, Registry } from '../../discovery/registry.ts';
import { heartbeat } from './fixtures.ts';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const facts = (over: Partial<PageFacts> = {}): PageFacts => ({
  version: '1.2.3',
  exchange: 'shoal',
  broker: 'connected',
  verify: true,
  shoalCompat: false,
  testUrl: 'http://s1.example/cvmfs/cms.cern.ch/.cvmfspublished',
  expiryMs: 180_000,
  rejections: [],
  ...over,
});

function cache(uuid: string, patch: (e: CacheEntry) => void, verify = true): CacheEntry {
  const r = new Registry();
  const { entry } = r.apply(heartbeat({ uuid, hostname: `${uuid}.example`, load: 500, max_load: 1000 }), { nowMs: NOW, auth: 'signed', keyId: 'k1', skewS: 0, verify }, () => undefined);
  patch(entry);
  return entry;
}

describe('discovery page', () => {
  const healthy = cache('healthy', (e) => (e.verification = { state: 'ok', nextAt: NOW + 60_000, failures: 0, checkedAt: NOW - 5000, ms: 12 }));
  const late = cache('late', (e) => {
    e.verification = { state: 'ok', nextAt: NOW, failures: 0 };
    e.lastActive = NOW - 100_000;
    e.intervalS = 30;
  });
  const failing = cache('failing', (e) => (e.verification = { state: 'failed', nextAt: NOW + 30_000, failures: 2, error: 'connect timed out', checkedAt: NOW - 10_000 }));
  const drift = cache('drift', (e) => {
    e.verification = { state: 'ok', nextAt: NOW, failures: 0 };
    e.clockInSync = false;
    e.skewS = -95;
  });
  const over = cache('over', (e) => {
    e.verification = { state: 'ok', nextAt: NOW, failures: 0 };
    e.load = 1500;
  });

  it('puts broken and late caches first, with a summary line and words beside the colours', () => {
    const html = renderPage([healthy, over, drift, late, failing], NOW, facts());
    const order = ['late.example', 'failing.example', 'drift.example', 'healthy.example', 'over.example'].map((h) => html.indexOf(h));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(html).toContain('<b>5</b> caches: 2 healthy, 1 late, 1 failing, 1 with clock drift');
    expect(html).toContain('late: missed 3 heartbeats (every 30 s)');
    expect(html).toContain('failing verification (2×): connect timed out');
    expect(html).toContain('clock drift -95 s');
    expect(html).toMatch(/class="over">150%/);
    expect(html).toContain('http-equiv="refresh"');
    expect(html).not.toContain('<script');
  });

  it('counts a cache whose agent went silent and whose check fails once, as late, everywhere', () => {
    const gone = cache('gone', (e) => {
      e.verification = { state: 'failed', nextAt: NOW, failures: 3, error: 'ECONNREFUSED' };
      e.lastActive = NOW - 88_000;
      e.intervalS = 30;
    });
    const html = renderPage([gone, healthy], NOW, facts());
    expect(html).toContain('<b>2</b> caches: 1 healthy, 1 late, 0 failing');
    expect(html).toContain('late: missed 2 heartbeats (every 30 s); failing verification (3×): ECONNREFUSED');
    expect(html).toMatch(/<tr class="s-late"><td>⚠ late/);
  });

  it('keeps a cache that said goodbye on the list for a while, as left, last and unlinked', () => {
    const left = cache('left', (e) => (e.site = 'KEK'));
    const html = renderPage([healthy], NOW, facts({ departed: [{ entry: left, at: NOW - 40_000 }] }));
    expect(html).toContain('<b>1</b> caches: 1 healthy, 0 late, 0 failing; 1 left lately');
    expect(html).toMatch(/<tr class="s-left"><td>← left<br><small>said goodbye 40 s ago<\/small><\/td><td class="wrap">left\.example<br><small>site KEK/);
    expect(html.indexOf('left.example')).toBeGreaterThan(html.indexOf('healthy.example'));
  });

  it('names the site of each cache in the list', () => {
    const sited = cache('sited', (e) => (e.site = 'DESY'));
    expect(renderPage([sited], NOW, facts())).toMatch(/sited\.example<\/a><br><small>site DESY<\/small>/);
  });

  it('says "not checked" when the server does not verify, and names its mode', () => {
    const off = cache('unchecked', () => undefined, false);
    const html = renderPage([off], NOW, facts({ verify: false }));
    expect(html).toContain('○ not checked');
    expect(html).toContain('caches not checked (--no-verify)');
    expect(html).not.toMatch(/healthy, verified/);
  });

  it('lists refused heartbeats by reason and sender', () => {
    const html = renderPage([], NOW, facts({
      rejections: [{ reason: 'bad-signature', detail: 'no key k9 here', uuid: 'u-1', hostname: 'cache9.example', sender: 'agent@10.1.2.3', count: 4, firstAt: NOW - 60_000, lastAt: NOW - 2000 }],
    }));
    expect(html).toMatch(/bad-signature<\/td><td class="wrap">cache9\.example<br><small>u-1/);
    expect(html).toContain('agent@10.1.2.3');
    expect(html).toContain('1 senders refused lately');
  });

  it('tells what to do when no cache has registered, with a command this server accepts', () => {
    const html = renderPage([], NOW, facts({ keyed: true, amqpUrl: 'amqp://disc:s3cret@mq.example:5672' }));
    expect(html).toContain('No cache has registered yet.');
    expect(html).toContain(
      '<code>estuary agent --amqp amqp://USER:PASSWORD@mq.example:5672 --cache-url http://127.0.0.1:3128 --hmac-key @/etc/estuary/hmac.key</code>',
    );
    expect(html).not.toContain('s3cret');
    expect(html).toContain('estuary discovery 1.2.3 · exchange shoal (broker connected)');
    expect(agentCommand(facts({ exchange: 'site-x', shoalCompat: true, keyed: false, amqpUrl: 'amqp://mq' }))).toBe(
      'estuary agent --amqp amqp://mq --exchange site-x --cache-url http://127.0.0.1:3128',
    );
  });

  it('shows what was tried for a failing cache on its own page', () => {
    const html = renderCachePage(failing, NOW, facts());
    expect(html).toMatch(/failed: fetched http:\/\/s1\.example\/cvmfs\/cms\.cern\.ch\/\.cvmfspublished through http:\/\/[^ ]+, last 10 s ago; error: connect timed out; next check in 30 s/);
  });

  it('sizes holdings readably and leaves out the agent self-test object', () => {
    expect(size(1536)).toBe('1.5 KiB');
    expect(size(300)).toBe('300 B');
    const e = cache('holds', (x) => (x.holds = { bytes: 4096, cvmfs: [{ repo: 'cms.cern.ch', bytes: 3000 }], prefixes: [{ prefix: 's1.example/cvmfs', bytes: 96 }] }));
    expect(holdings(e, 'http://s1.example/cvmfs/cms.cern.ch/.cvmfspublished').map((h) => h.name)).toEqual(['cms.cern.ch']);
    expect(triage([e], NOW)).toHaveLength(1);
  });
});
