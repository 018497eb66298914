// Attack: a listing whose query names `prefix` twice, the scope check reading one value and the
// store another.
//
// docs/STAGING.md: ListObjectVersions and ListMultipartUploads are allowed "only for a prefix inside
// a scope". The endpoint reads the query into a Map (route.ts queryParams), so of two `prefix`
// parameters the LAST is checked, and then passes the client's query to the store as sent
// (endpoint.ts #scopedList, `#exchange`). Go's url.Values.Get (MinIO) and most servers read the
// FIRST. So `?versions&prefix=other/&prefix=run42/` is checked as run42/ and reaches the store as a
// listing of other/: a name the scope checks never saw (the brief's criterion). The answer is
// filtered by key afterwards, but the store was asked about another user's prefix, and its
// markers and IsTruncated come back.
// Expected: the store only ever receives listing queries whose every `prefix` is inside the
// credential's scope (or the request is refused).

import http from 'node:http';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startS3Gw } from './gwmap4-lib.ts';
import { BUCKET, direct, send } from './s3-harness.ts';

afterAll(runTeardowns);

/** A relay in front of the store that records every request line it forwards. */
async function recorder(target: string) {
  const seen: string[] = [];
  const t = new URL(target);
  const srv = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const up = http.request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: req.headers }, (a) => {
      res.writeHead(a.statusCode ?? 502, a.headers);
      a.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  onTeardown(() => new Promise<void>((r) => srv.close(() => r())));
  return { seen, url: `http://127.0.0.1:${(srv.address() as { port: number }).port}` };
}

const prefixesOf = (line: string): string[] => {
  const q = line.slice(line.indexOf('?') + 1);
  return q
    .split('&')
    .filter((p) => decodeURIComponent(p.split('=')[0]!) === 'prefix')
    .map((p) => decodeURIComponent((p.split('=')[1] ?? '').replace(/\+/g, ' ')));
};

describe('a listing query that names prefix twice', () => {
  it('never reaches the store with a prefix outside the scope', async () => {
    const store = await startS3rver({ buckets: [BUCKET] });
    const rec = await recorder(store.endpoint);
    const g = await startS3Gw({ ...store, endpoint: rec.url }, ['--s3-revalidate', '60s']);
    const cred = await g.issue(`${BUCKET}/run42/`);
    expect((await direct(store, 'PUT', `/${BUCKET}/other/secret.txt`, 'another user')).status).toBe(200);
    const asked = [
      `/${BUCKET}?versions&prefix=other%2F&prefix=run42%2F`,
      `/${BUCKET}?uploads&prefix=other%2F&prefix=run42%2F`,
      `/${BUCKET}?versions&pre%66ix=other%2F&prefix=run42%2F`,
      `/${BUCKET}?versions&prefix=&prefix=run42%2F`,
    ];
    const answers: string[] = [];
    for (const target of asked) {
      const r = await send(g.gw, cred, 'GET', target);
      answers.push(`${target} -> ${r.status}`);
      expect(r.body).not.toContain('other/secret.txt');
    }
    const outside = rec.seen.filter((l) => /[?&](versions|uploads)/.test(l) && prefixesOf(l).some((p) => !p.startsWith('run42/')));
    expect(outside, `${answers.join('\n')}\nstore saw:\n${rec.seen.join('\n')}`).toEqual([]);
  }, 60_000);
});
