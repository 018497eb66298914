// Attack: a second user, whose credential is scoped to another prefix, asks for what the first
// user filled: whole objects, range blocks, HEADs, with only-if-cached, conditionals and CORS
// Origin, with --workers 2, also through a second --s3 name for the same store bucket.
//
// docs/STAGING.md ("Credentials and their threat model"): each request is checked before anything
// reaches the store; an operation on a key outside the credential's scopes gets AccessDenied (403).
// Expected: every request of the second user for the first user's keys gets 403 and no body.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const text = (n: number, seed: string) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
const close = { connection: 'close' };

describe('a second user scoped to another prefix', () => {
  it('never reads what the first user filled', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store, ['--s3-block-size', '1MiB', '--workers', '2',]);
    const a = await g.issue(`${BUCKET}/run42/`);
    const b = await g.issue(`${BUCKET}/run43/`);
    const big = text(4 << 20, 'secret-of-run42-');
    const small = 'small secret of run42';
    expect((await direct(store, 'PUT', `/${BUCKET}/run42/big.bin`, big)).status).toBe(200);
    expect((await direct(store, 'PUT', `/${BUCKET}/run42/small.txt`, small)).status).toBe(200);
    for (let i = 0; i < 4; i++) {
      expect((await send(g.gw, a, 'GET', `/${BUCKET}/run42/big.bin`, { headers: { ...close, range: 'bytes=0-99', origin: 'https://x.example' } })).status).toBe(206);
      expect((await send(g.gw, a, 'GET', `/${BUCKET}/run42/small.txt`, { headers: close })).body).toBe(small);
      expect((await send(g.gw, a, 'HEAD', `/${BUCKET}/run42/big.bin`, { headers: close })).status).toBe(200);
    }
    const leaks: string[] = [];
    const targets = [
      `/${BUCKET}/run42/big.bin`, `/${BUCKET}/run42/small.txt`,
      `/${BUCKET}/run42//small.txt`, `/${BUCKET}/run42/big.bin?x-id=GetObject`, `/${BUCKET}/run4%32/small.txt`, `/${BUCKET}/run43%2F..%2Frun42/small.txt`,
    ];
    const headerSets: Record<string, string>[] = [
      {}, { range: 'bytes=0-99' }, { 'cache-control': 'only-if-cached' }, { range: 'bytes=0-99', 'cache-control': 'only-if-cached' },
      { 'if-none-match': '*' }, { 'if-match': '*', range: 'bytes=0-99' }, { origin: 'https://x.example', range: 'bytes=0-99' }, { 'cache-control': 'max-stale=9999' },
    ];
    for (const t of targets) {
      for (const h of headerSets) {
        for (const m of ['GET', 'HEAD']) {
          const r = await send(g.gw, b, m, t, { headers: { ...close, ...h } });
          if (r.status !== 403 || r.body.includes('secret')) leaks.push(`${m} ${t} ${JSON.stringify(h)}: ${r.status} ${r.body.slice(0, 40)} (${String(r.headers['cache-status'])})`);
        }
      }
    }
    expect(leaks, leaks.join('\n')).toEqual([]);
  }, 120_000);
});
