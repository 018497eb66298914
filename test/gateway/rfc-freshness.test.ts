// RFC 9111 / 9110 details of freshness and stored headers, against a real origin on loopback:
// how Age and dates are read, what a first (filling) response says about its age, which headers
// a stored response keeps.

import { describe, expect, it } from 'vitest';
import { send } from './helpers/client.ts';
import { startTestGateway } from './helpers/gateway.ts';
import { fixed, startOrigin } from './helpers/origin.ts';

const inOneHour = () => new Date(Date.now() + 3_600_000).toUTCString();

describe('RFC 9111 freshness details', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();
  const get = (path: string, headers: Record<string, string> = {}) =>
    send(gw.url, `${origin.url}${path}`, { headers });

  it('reads a list-valued Age by its first member, and ignores "7200.0"', async () => {
    origin.route('/age-list', fixed('v', { 'cache-control': 'max-age=3600', age: '7200, 0' }));
    origin.route('/age-decimal', fixed('v', { 'cache-control': 'max-age=3600', age: '7200.0' }));
    expect(Number((await get('/age-list')).headers.age)).toBeGreaterThanOrEqual(7200);
    // 7200 s old with a lifetime of 3600: stale at once, so the next request goes upstream.
    expect((await get('/age-list')).headers['cache-status']).toMatch(/fwd=stale/);
    expect(origin.count('/age-list')).toBe(2);
    await get('/age-decimal');
    const hit = await get('/age-decimal');
    expect(hit.headers['cache-status']).toMatch(/^estuary; hit/);
    expect(Number(hit.headers.age)).toBeLessThan(5);
  });

  it('gives the first, filling response the origin Age plus the time in flight', async () => {
    origin.route('/age-fill', async (_req, res) => {
      await new Promise((r) => setTimeout(r, 1100));
      fixed('v', { 'cache-control': 'max-age=600', age: '100' })(_req, res);
    });
    const first = await get('/age-fill');
    expect(first.headers['cache-status']).toMatch(/fwd=miss; stored/);
    expect(Number(first.headers.age)).toBeGreaterThanOrEqual(101);
    expect(Number(first.headers.age)).toBeLessThan(105);
  });

  it('takes an Expires that is not a strict HTTP-date as already expired', async () => {
    const valid = inOneHour();
    const tomorrowAt9 = new Date(Date.now() + 86_400_000);
    tomorrowAt9.setUTCHours(9, 0, 0, 0);
    const variants: Record<string, Record<string, string>> = {
      '/exp-utc': { expires: valid.replace('GMT', 'UTC') },
      // Tomorrow at 09:00, written with a one-digit hour.
      '/exp-hour': { expires: tomorrowAt9.toUTCString().replace(' 09:', ' 9:') },
      '/exp-date': { expires: valid, date: new Date().toUTCString().replace('GMT', 'UTC') },
    };
    origin.route('/exp-lines', (_req, res) => {
      res.setHeader('expires', [valid, valid]);
      res.writeHead(200, { 'content-length': 1 });
      res.end('v');
    });
    await get('/exp-lines');
    expect((await get('/exp-lines')).headers['cache-status']).not.toMatch(/hit/);
    for (const [path, headers] of Object.entries(variants)) {
      origin.route(path, fixed('v', headers));
      await get(path);
      const again = await get(path);
      expect(again.headers['cache-status'], path).not.toMatch(/hit/);
      expect(origin.count(path), path).toBe(2);
    }
  });

  it('accepts the obsolete RFC 850 and asctime forms of Expires', async () => {
    const t = new Date(Date.now() + 3_600_000);
    const day = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'][t.getUTCDay()];
    const [, dd, mon, yyyy, time] = t.toUTCString().split(' ');
    origin.route('/exp-850', fixed('v', { expires: `${day}, ${dd}-${mon}-${yyyy!.slice(2)} ${time} GMT` }));
    origin.route(
      '/exp-asc',
      fixed('v', { expires: `${day!.slice(0, 3)} ${mon} ${String(Number(dd)).padStart(2, ' ')} ${time} ${yyyy}` }),
    );
    for (const path of ['/exp-850', '/exp-asc']) {
      await get(path);
      expect((await get(path)).headers['cache-status'], path).toMatch(/^estuary; hit/);
    }
  });

  it('stores Content-Range and sends it back with stored responses', async () => {
    origin.route('/cr', fixed('abc', { 'cache-control': 'max-age=60', 'content-range': 'bytes 0-2/10' }));
    await get('/cr');
    const hit = await get('/cr');
    expect(hit.headers['cache-status']).toMatch(/^estuary; hit/);
    expect(hit.headers['content-range']).toBe('bytes 0-2/10');
    const ranged = await get('/cr', { range: 'bytes=1-1' });
    expect(ranged.status).toBe(206);
    expect(ranged.headers['content-range']).toBe('bytes 1-1/3');
  });
});

describe('which statuses are stored', async () => {
  const origin = await startOrigin();
  const gw = await startTestGateway();
  const twice = async (path: string) => {
    const first = await send(gw.url, `${origin.url}${path}`);
    const second = await send(gw.url, `${origin.url}${path}`);
    return { first, second };
  };

  it('stores any final status with explicit freshness', async () => {
    origin.route('/s299', fixed('x', { 'cache-control': 'max-age=60' }, 299));
    origin.route('/s418', fixed('teapot', { expires: new Date(Date.now() + 60_000).toUTCString() }, 418));
    origin.route('/s500', fixed('down', { 'cache-control': 'max-age=60' }, 500));
    for (const [path, status] of [
      ['/s299', 299],
      ['/s418', 418],
      ['/s500', 500],
    ] as const) {
      const { second } = await twice(path);
      expect(second.status, path).toBe(status);
      expect(second.headers['cache-status'], path).toMatch(/^estuary; hit/);
      expect(origin.count(path), path).toBe(1);
    }
  });

  it('stores no other status without explicit freshness, and never a 206', async () => {
    origin.route('/s418-lm', fixed('x', { 'last-modified': new Date(Date.now() - 86_400_000).toUTCString() }, 418));
    origin.route('/s206', fixed('x', { 'cache-control': 'max-age=60', 'content-range': 'bytes 0-0/5' }, 206));
    for (const path of ['/s418-lm', '/s206']) {
      const { second } = await twice(path);
      expect(second.headers['cache-status'], path).toMatch(/fwd=miss; detail=(status|no-freshness)/);
      expect(origin.count(path), path).toBe(2);
    }
  });

  it('honours must-understand: stores understood statuses despite no-store, refuses others', async () => {
    const cc = { 'cache-control': 'max-age=60, no-store, must-understand' };
    origin.route('/mu200', fixed('x', cc));
    origin.route('/mu299', fixed('x', cc, 299));
    expect((await twice('/mu200')).second.headers['cache-status']).toMatch(/^estuary; hit/);
    expect((await twice('/mu299')).second.headers['cache-status']).toMatch(/detail=status/);
  });
});
