import { describe, expect, it } from 'vitest';
import { Registry } from '../../discovery/registry.ts';
import { heartbeat } from './fixtures.ts';

const meta = (nowMs: number) => ({ nowMs, auth: 'signed' as const, skewS: 0, verify: true });
const nowhere = () => undefined;

describe('registry', () => {
  it('expires a cache 180 s after its last heartbeat, not before', () => {
    const r = new Registry();
    r.apply(heartbeat(), meta(0), nowhere);
    expect(r.sweep(180_000)).toEqual([]);
    expect(r.sweep(180_001)).toEqual(['cache-1']);
  });
  it('keeps created and verification across heartbeats, resets them when the address changes', () => {
    const r = new Registry();
    r.apply(heartbeat(), meta(1000), nowhere);
    r.get('cache-1')!.verification.state = 'ok';
    const again = r.apply(heartbeat({ load: 5 }), meta(2000), nowhere);
    expect(again.fresh).toBe(false);
    expect(again.entry.created).toBe(1000);
    expect(again.entry.verification.state).toBe('ok');
    const moved = r.apply(heartbeat({ public_ip: '130.87.9.9' }), meta(3000), nowhere);
    expect(moved.fresh).toBe(true);
    expect(moved.entry.verification.state).toBe('pending');
  });
  it('fills Shoal defaults for what old agents leave out', () => {
    const r = new Registry();
    const { entry } = r.apply(
      { uuid: 'x', hostname: 'h', timestamp: 0, load: 0, squid_port: 3128 },
      meta(0),
      nowhere,
    );
    expect(entry).toMatchObject({
      port: 3128,
      upstream: 'both',
      shoalType: 'squid',
      kind: 'squid',
      maxLoad: 122_070,
    });
    expect(entry.globalAccess).toBe(false);
  });
});
