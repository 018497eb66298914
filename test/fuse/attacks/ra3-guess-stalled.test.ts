// Readahead across files when the guess's first GET gets no answer (a kept-alive connection that a
// NAT or firewall dropped without a word, a stuck node behind a load balancer): an open() of the
// guessed file that waited for that GET would wait up to --request-timeout and its retry,
// although it could ask for its own first bytes at once.
//
// Promise (docs/SEMANTICS.md, "read, across files"): the guess is there so the link "stays busy
// while the reader drains the end of one file ... instead of falling idle until the next open's
// round trip"; "A wrong guess costs the bytes fetched (at most the window) and nothing else".
// (An open whose own GET meets such a stall waits as long: what is at stake is that the open waits
// for a request it does not need, issued seconds before on a connection it cannot judge.)

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable } from '../../helpers/minio.ts';
import { MiB, mibDigests, type RelayRequest, startDriver, startRelay, walkBucket } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();
const F2 = randomBytes(6 * MiB);
const f2Get = (r: RelayRequest) => r.method === 'GET' && r.key === 'd/f2';

async function setUp() {
  const { server } = await walkBucket(F2);
  const relay = await startRelay(server, 'ra3');
  // The first GET of f2 from its start is never answered; any later one is.
  let held = false;
  relay.hold = (r) => {
    if (held || !f2Get(r) || r.rangeStart !== 0) return false;
    held = true;
    return true;
  };
  const m = await mountBucket(relay.server, 'ra3', ['--request-timeout', '30s']);
  const d = await startDriver();
  expect((await d.cmd({ op: 'listdir', path: `${m.dir}/d` })).names?.length).toBe(4);
  return { relay, m, d };
}

async function timedRead(d: Awaited<ReturnType<typeof startDriver>>, path: string) {
  const t = Date.now();
  const got = await d.cmd({ op: 'readall', path }, 120_000);
  return { ms: Date.now() - t, ok: JSON.stringify(got.mibs) === JSON.stringify(mibDigests(F2)) };
}

describe.runIf(fuse.ok && minio.ok)('readahead across files: the guess\'s first GET is never answered', () => {
  it('the walker\'s open of the guessed file does not wait for it', { timeout: 180_000 }, async () => {
    const { relay, m, d } = await setUp();
    for (const f of ['a0', 'a1', 'f1']) expect((await d.cmd({ op: 'readall', path: `${m.dir}/d/${f}` })).err).toBeUndefined();
    await relay.waitFor((r) => f2Get(r) && r.rangeStart === 0);
    const r = await timedRead(d, `${m.dir}/d/f2`);
    expect(r.ok).toBe(true);
    expect(r.ms, `the open and read of f2 took ${r.ms} ms`).toBeLessThan(5000);
  });
});
