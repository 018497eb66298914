import { describe, expect, it } from 'vitest';
import { admit, FloodGuard } from '../../discovery/admission.ts';
import { createIngest } from '../../discovery/ingest.ts';
import { createLocator } from '../../discovery/locator.ts';
import { NO_GEO_DB } from '../../discovery/geoip.ts';
import { Registry } from '../../discovery/registry.ts';
import { EMPTY_SITE_MAP } from '../../discovery/site-map.ts';
import { parseHmacKey, sign } from '../../lib/heartbeat-auth.ts';
import { heartbeat, testLog } from './fixtures.ts';

const shared = parseHmacKey('shared-secret-0123456789');
const kek = parseHmacKey('KEK=kek-secret-0123456789');
const keys = new Map([shared, kek].map((k) => [k.id, k]));
const now = Date.now();
const body = (x: unknown) => Buffer.from(JSON.stringify(x));

describe('admission', () => {
  const policy = { keys, allowUnsigned: false };
  it('accepts a signed heartbeat and reports the clock skew', () => {
    const b = body(heartbeat({ timestamp: now / 1000 + 20 }));
    const a = admit({ body: b, headers: sign(b, shared), routingKey: 'info' }, policy, now);
    expect(a.ok).toBe(true);
    if (a.ok) {
      expect(a.auth).toBe('signed');
      expect(a.skewS).toBeCloseTo(20, 3);
      expect(a.goodbye).toBe(false);
    }
  });
  it('unsigned only on the Shoal-compatibility path, and then marked', () => {
    const b = body(heartbeat());
    expect(admit({ body: b, routingKey: 'info' }, policy, now)).toMatchObject({
      ok: false,
      reason: 'unsigned',
    });
    expect(admit({ body: b, routingKey: 'info' }, { keys, allowUnsigned: true }, now)).toMatchObject({
      ok: true,
      auth: 'unsigned',
    });
  });
  it('a badly signed message is dropped even with Shoal compatibility on', () => {
    const b = body(heartbeat());
    const h = sign(Buffer.from('other'), shared);
    expect(
      admit({ body: b, headers: h, routingKey: 'info' }, { keys, allowUnsigned: true }, now),
    ).toMatchObject({
      ok: false,
      reason: 'bad-signature',
    });
  });
  it('a per-site key only signs for its own site', () => {
    const good = body(heartbeat({}, { site: 'KEK' }));
    expect(admit({ body: good, headers: sign(good, kek), routingKey: 'info' }, policy, now).ok).toBe(true);
    const bad = body(heartbeat({}, { site: 'FNAL' }));
    expect(admit({ body: bad, headers: sign(bad, kek), routingKey: 'info' }, policy, now)).toMatchObject({
      ok: false,
      reason: 'site-mismatch',
    });
  });
  it.each([
    ['oversized', Buffer.alloc(17 * 1024, 32)],
    ['bad-json', Buffer.from('{"uuid": ')],
    ['invalid', body({ uuid: 'x' })],
    ['absurd-time', body(heartbeat({ timestamp: now / 1000 - 3 * 86_400 }))],
  ])('%s', (reason, b) => {
    expect(admit({ body: b, headers: sign(b, shared), routingKey: 'info' }, policy, now)).toMatchObject({
      ok: false,
      reason,
    });
  });
  it('a goodbye is recognised by routing key or flag', () => {
    const b = body(heartbeat());
    expect(admit({ body: b, headers: sign(b, shared), routingKey: 'goodbye' }, policy, now)).toMatchObject({
      goodbye: true,
    });
    const f = body(heartbeat({}, { goodbye: true }));
    expect(admit({ body: f, headers: sign(f, shared), routingKey: 'info' }, policy, now)).toMatchObject({
      goodbye: true,
    });
  });
});

describe('flood guard', () => {
  it('lets a burst through, then one per second', () => {
    const g = new FloodGuard(3, 1);
    expect([1, 2, 3, 4].map(() => g.allow('a', 0))).toEqual([true, true, true, false]);
    expect(g.allow('b', 0)).toBe(true);
    expect(g.allow('a', 500)).toBe(false);
    expect(g.allow('a', 1000)).toBe(true);
    g.prune(100_000);
    expect(g.size).toBe(0);
  });
});

describe('ingest', () => {
  const setup = (allowUnsigned = false, maxCaches = 100, burst = 2) => {
    const registry = new Registry(maxCaches);
    const counts: Record<string, number> = {};
    const t = testLog();
    const ingest = createIngest({
      registry,
      locator: createLocator(EMPTY_SITE_MAP, NO_GEO_DB),
      policy: { keys, allowUnsigned },
      verify: false,
      log: t.log,
      flood: new FloodGuard(burst, 0.001),
      count: (r) => {
        counts[r] = (counts[r] ?? 0) + 1;
      },
    });
    const signed = (hb: unknown, rk = 'info') => {
      const b = body(hb);
      return ingest({ body: b, headers: sign(b, shared), routingKey: rk });
    };
    return { registry, counts, ingest, signed, t };
  };
  it('adds, refreshes, says goodbye', () => {
    const s = setup();
    expect(s.signed(heartbeat({ load: 1 }))).toBe('accepted');
    expect(s.registry.get('cache-1')?.load).toBe(1);
    expect(s.signed(heartbeat(), 'goodbye')).toBe('goodbye');
    expect(s.registry.size).toBe(0);
  });
  it('counts and logs every drop, throttling repeated lines, and never throws', () => {
    const s = setup();
    for (let i = 0; i < 5; i++)
      expect(s.ingest({ body: Buffer.from('garbage'), routingKey: 'info' })).toBe('unsigned');
    expect(s.counts.unsigned).toBe(5);
    const lines = s.t.lines().filter((l) => l.msg === 'heartbeat dropped');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reason: 'unsigned' });
  });
  it('names the cache in each drop line and throttles per cache, so one bad agent among many shows', () => {
    const s = setup(true);
    const bad = (uuid: string) =>
      s.ingest({ body: body({ ...heartbeat({ uuid }), load: 'lots' }), routingKey: 'info', sender: 'agent-user' });
    // A noisy bad agent first, then a second one: the second must still get its line.
    for (let i = 0; i < 5; i++) expect(bad('noisy')).toBe('invalid');
    expect(bad('quiet')).toBe('invalid');
    const lines = s.t.lines().filter((l) => l.msg === 'heartbeat dropped');
    expect(lines.map((l) => l.uuid)).toEqual(['noisy', 'quiet']);
    expect(lines[1]).toMatchObject({
      reason: 'invalid',
      uuid: 'quiet',
      hostname: 'cache1.example.org',
      sender: 'agent-user',
    });
  });
  it('keeps a tombstone after goodbye: a replayed older heartbeat does not bring the cache back', () => {
    const s = setup(false, 100, 10);
    const t0 = Date.now() / 1000;
    const hb = heartbeat({ timestamp: t0 });
    expect(s.signed(hb)).toBe('accepted');
    expect(s.signed(heartbeat({ timestamp: t0 + 1 }), 'goodbye')).toBe('goodbye');
    expect(s.signed(hb)).toBe('replay');
    expect(s.signed(heartbeat({ timestamp: t0 + 1 }))).toBe('replay');
    expect(s.registry.size).toBe(0);
    // The agent started again: its heartbeats are newer than its goodbye.
    expect(s.signed(heartbeat({ timestamp: t0 + 2 }))).toBe('accepted');
  });
  it('drops a flood from one cache', () => {
    const s = setup();
    expect([1, 2, 3].map(() => s.signed(heartbeat()))).toEqual(['accepted', 'accepted', 'flood']);
    expect(s.counts.flood).toBe(1);
  });
  it('drops new caches when the registry is full, but keeps refreshing known ones', () => {
    const s = setup(false, 1);
    expect(s.signed(heartbeat({ uuid: 'a' }))).toBe('accepted');
    expect(s.signed(heartbeat({ uuid: 'b' }))).toBe('registry-full');
    expect(s.signed(heartbeat({ uuid: 'a' }))).toBe('accepted');
  });
  it('a signed cache cannot be taken over or dismissed by an unsigned message or another key', () => {
    const s = setup(true);
    expect(s.signed(heartbeat({ public_ip: '130.87.1.1' }))).toBe('accepted');
    const evil = body(heartbeat({ public_ip: '6.6.6.6' }));
    expect(s.ingest({ body: evil, routingKey: 'info' })).toBe('impersonation');
    expect(s.ingest({ body: evil, routingKey: 'goodbye' })).toBe('impersonation');
    const kekSigned = body(heartbeat({ public_ip: '6.6.6.6' }, { site: 'KEK' }));
    expect(s.ingest({ body: kekSigned, headers: sign(kekSigned, kek), routingKey: 'info' })).toBe(
      'impersonation',
    );
    expect(s.registry.get('cache-1')?.publicIp).toBe('130.87.1.1');
    expect(s.counts.impersonation).toBe(3);
  });

  it('drops a replayed signed heartbeat older than the one applied', () => {
    const s = setup(true);
    const now = Date.now() / 1000;
    expect(s.signed(heartbeat({ timestamp: now, public_ip: '130.87.1.1' }))).toBe('accepted');
    expect(s.signed(heartbeat({ timestamp: now - 30, public_ip: '130.87.9.9' }))).toBe('replay');
    expect(s.registry.get('cache-1')?.publicIp).toBe('130.87.1.1');
    expect(s.counts.replay).toBe(1);
    expect(s.signed(heartbeat({ timestamp: now + 30, public_ip: '130.87.2.2' }))).toBe('accepted');
    expect(s.registry.get('cache-1')?.publicIp).toBe('130.87.2.2');
  });

  it('flags clock drift beyond 10 s and marks unsigned caches', () => {
    const s = setup(true);
    expect(
      s.ingest({ body: body(heartbeat({ timestamp: Date.now() / 1000 - 60 })), routingKey: 'info' }),
    ).toBe('accepted');
    const e = s.registry.get('cache-1')!;
    expect(e.clockInSync).toBe(false);
    expect(e.auth).toBe('unsigned');
  });
});

describe('cache addresses', () => {
  it('drops loopback and link-local addresses, keeping the rest of the heartbeat', () => {
    for (const bad of ['127.0.0.1', '127.8.0.1', '::1', '169.254.169.254', 'fe80::1', '::ffff:127.0.0.1', '0.0.0.0']) {
      const b = body(heartbeat({ public_ip: bad, external_ip: bad, private_ip: '10.1.1.1' }));
      const a = admit({ body: b, headers: sign(b, shared), routingKey: 'info' }, { keys, allowUnsigned: false }, now);
      expect(a.ok, bad).toBe(true);
      if (a.ok) {
        expect(a.heartbeat.public_ip, bad).toBeUndefined();
        expect(a.heartbeat.external_ip, bad).toBeUndefined();
        expect(a.heartbeat.private_ip).toBe('10.1.1.1');
      }
    }
  });
  it('drops a heartbeat left with no address, as Shoal ignores one without public or private ip', () => {
    const b = body(heartbeat({ hostname: 'localhost', public_ip: '127.0.0.1', private_ip: undefined }));
    expect(admit({ body: b, headers: sign(b, shared), routingKey: 'info' }, { keys, allowUnsigned: false }, now)).toMatchObject({
      ok: false,
      reason: 'invalid',
    });
  });
  it('keeps them only when told to (a single-host test setup)', () => {
    const b = body(heartbeat({ public_ip: '127.0.0.1' }));
    const a = admit(
      { body: b, headers: sign(b, shared), routingKey: 'info' },
      { keys, allowUnsigned: false, allowHostAddresses: true },
      now,
    );
    expect(a.ok && a.heartbeat.public_ip).toBe('127.0.0.1');
  });
});

describe('Shoal compatibility and odd signature headers', () => {
  it('drops a heartbeat whose signature header is a number, even where unsigned ones pass', () => {
    const b = body(heartbeat());
    const policy = { keys, allowUnsigned: true };
    expect(admit({ body: b, routingKey: 'info' }, policy, now).ok).toBe(true);
    expect(admit({ body: b, headers: { 'x-estuary-signature': 42 }, routingKey: 'info' }, policy, now)).toMatchObject(
      { ok: false, reason: 'bad-signature' },
    );
  });
});
