// Regression (holds today): a credential scoped to run42/ asks, by every spelling we could think
// of, for an object of another prefix that the cache holds and serves from a mapping (read
// through a whole-bucket credential). No answer carries its bytes (docs/STAGING.md, "Names the
// gateway refuses": the scope is checked on the decoded name, and "the cache keeps objects under
// their name, which must be the name the store serves").

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { metric } from './disk-lib.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

const SECRET = 'other-prefix-secret/'.repeat(104_858);

describe('a scoped credential and the mapped body of an object outside its scope', () => {
  it('never gets its bytes', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const g = await startS3Gw(store);
    const all = await g.issue(BUCKET);
    const scoped = await g.issue(`${BUCKET}/run42/`);
    expect((await direct(store, 'PUT', `/${BUCKET}/run43/secret`, SECRET)).status).toBe(200);
    expect((await direct(store, 'PUT', `/${BUCKET}/run42/own`, 'mine')).status).toBe(200);
    expect((await send(g.gw, all, 'GET', `/${BUCKET}/run43/secret`)).body).toBe(SECRET);
    expect((await send(g.gw, all, 'GET', `/${BUCKET}/run43/secret`)).headers['cache-status']).toMatch(/hit/);
    expect(await metric(g.port, 'estuary_gateway_disk_mapped_bytes')).toBeGreaterThan(0);
    const spellings = [
      '/run42/../run43/secret', '/run42/..%2Frun43%2Fsecret', '/run42%2F..%2Frun43%2Fsecret', '/run42/%2e%2e/run43/secret',
      '/run42/%252e%252e/run43/secret', '/run42/%E2%80%A5/run43/secret', '/run42/%EF%BC%8E%EF%BC%8E/run43/secret',
      '/run42/..%5Crun43%5Csecret', '/run42/.%2E/run43/secret', '/run42//../run43/secret', '/run42/%00/../run43/secret',
      '/run43/secret', '/RUN43/secret', '/run43%2Fsecret', '/run42/../../kek-data/run43/secret', `/run42/${'a'.repeat(6000)}/../../run43/secret`,
    ];
    const leaked: string[] = [];
    for (const s of spellings) {
      for (const method of ['GET', 'HEAD']) {
        const r = await send(g.gw, scoped, method, `/${BUCKET}${s}`).catch(() => undefined);
        if (r && (r.body.includes('other-prefix-secret') || (method === 'HEAD' && r.status === 200))) leaked.push(`${method} ${s.slice(0, 60)}: ${r.status}`);
      }
      // Virtual-host addressing too.
      const v = await send(g.gw, scoped, 'GET', s, { host: `${BUCKET}.localhost:${g.port}` }).catch(() => undefined);
      if (v?.body.includes('other-prefix-secret')) leaked.push(`vhost ${s.slice(0, 60)}: ${v.status}`);
    }
    expect(leaked).toEqual([]);
    expect((await send(g.gw, scoped, 'GET', `/${BUCKET}/run42/own`)).body).toBe('mine');
  }, 40_000);
});
