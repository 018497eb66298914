// The production DataSource against a real `estuary gateway` process serving an s3rver bucket:
// holdings before and after a pre-warm, sizes of objects and datasets listed at the store, HEAD
// for plain HTTP, the summary when no admin token is given, one-line errors for a wrong token;
// then the control loop placing work at the site, pre-warming its gateway, and seeing the data
// arrive in the next interval's holdings.

import { createServer } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { MemoryBatch } from '../../coordinator/batch/memory.ts';
import { VirtualClock } from '../../coordinator/clock.ts';
import { controllerSchema, type EstuaryConfig, siteSchema } from '../../coordinator/config.ts';
import { makeController } from '../../coordinator/controllers.ts';
import { Coordinator } from '../../coordinator/coordinator.ts';
import { DEFAULT_COST } from '../../coordinator/cost.ts';
import { GatewayData, gatewayEndpoints } from '../../coordinator/data-gateway.ts';
import { estuaryPlan } from '../../coordinator/estuary-policy.ts';
import { firstFit } from '../../coordinator/placement.ts';
import { DroneRegistry } from '../../coordinator/registry.ts';
import { MemorySite } from '../../coordinator/sites/memory.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { startGatewayProcess } from '../gateway/helpers/gateway.ts';

const TOKEN = 'coordinator-admin-token-1';
const MB = 1e6;

async function eventually<T>(f: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the gateway DataSource, against a real gateway', async () => {
  const store = await startS3rver({ buckets: ['kek'] });
  const s3 = new S3Client({ endpoint: store.endpoint, region: store.region, forcePathStyle: true, credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } });
  for (const [key, size] of [['run42/a.root', 3 * MB], ['run42/b.root', 2 * MB], ['run43/c.root', 1 * MB]] as const)
    await s3.send(new PutObjectCommand({ Bucket: 'kek', Key: key, Body: Buffer.alloc(size, 7) }));
  const dir = await tempDir('estuary-co-data-');
  writeFileSync(join(dir, 'issuer.key'), 'issuer-key-0123456789abcdef0123456789abcdef');
  writeFileSync(join(dir, 'keys.json'), JSON.stringify({ default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, region: store.region } }));
  writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
  const gw = await startGatewayProcess([
    '--s3', `kek=${store.endpoint}`,
    '--s3-issuer-key-file', join(dir, 'issuer.key'),
    '--s3-credentials', join(dir, 'keys.json'),
    '--allow-dest', '@loopback',
    '--admin-token', TOKEN,
  ]);
  const site = (gateway: object) => siteSchema.parse({ adapter: 'command', quota: 2, machineTypes: ['small'], command: { start: 'true', stop: 'true', status: 'true' }, gateway });
  const data = new GatewayData(gatewayEndpoints({ tokyo: site({ url: gw.url, tokenFile: join(dir, 'token') }) }));

  it('sizes objects and datasets at the store, and sees a pre-warm in its holdings', async () => {
    expect(await data.size('s3://kek/run42')).toBe(5 * MB);
    expect(await data.size('s3://kek/run42/a.root')).toBe(3 * MB);
    expect(await data.size('s3://elsewhere/x')).toBeUndefined();
    expect(await data.size('cvmfs://atlas.cern.ch')).toBeUndefined();
    expect((await data.holdings(['s3://kek/run42'])).get('tokyo')?.get('s3://kek/run42')).toBe(0);
    await data.prewarm('tokyo', ['s3://kek/run42']);
    const held = (await data.holdings(['s3://kek/run42', 's3://kek/run42/a.root', 's3://kek/run43'])).get('tokyo')!;
    expect([...held]).toEqual([['s3://kek/run42', 5 * MB], ['s3://kek/run42/a.root', 3 * MB], ['s3://kek/run43', 0]]);
  });

  it('sizes plain HTTP inputs by HEAD', async () => {
    const origin = createServer((req, res) => {
      res.writeHead(req.url === '/big' ? 200 : 404, { 'content-length': req.url === '/big' ? '1234567' : '0' });
      res.end();
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    onTeardown(() => new Promise<void>((r) => origin.close(() => r())));
    const port = (origin.address() as { port: number }).port;
    expect(await data.size(`http://127.0.0.1:${port}/big`)).toBe(1234567);
    expect(await data.size(`http://127.0.0.1:${port}/missing`)).toBeUndefined();
  });

  it('reads the summary without a token, and fails in one line with a wrong one', async () => {
    const open = new GatewayData([{ site: 'tokyo', url: gw.url, timeoutMs: 5000 }]);
    // The summary counts by bucket and first segment: run42 as a whole.
    expect((await open.holdings(['s3://kek/run42'])).get('tokyo')?.get('s3://kek/run42')).toBe(5 * MB);
    await expect(open.prewarm('tokyo', ['s3://kek/run43'])).rejects.toThrow(/no admin token/);
    const wrong = new GatewayData([{ site: 'tokyo', url: gw.url, token: 'wrong', timeoutMs: 5000 }]);
    const err = await wrong.holdings(['s3://kek/run42']).catch((e: Error & { code?: string }) => e);
    expect((err as { code?: string }).code).toBe('ESTUARY_CO_DATA');
    expect((err as Error).message).toMatch(/^site tokyo: gateway holdings failed: .* answered 401: .*; check gateway\.url and gateway\.token-file$/);
    expect((err as Error).message.split('\n')).toHaveLength(1);
    const bad = await fetch(`${gw.url}/estuary/v1/admin/holdings`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"urls": []}' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe('ESTUARY_GW_ADMIN_REQUEST');
    expect(() => gatewayEndpoints({ x: site({ url: gw.url, tokenFile: join(dir, 'nope') }) })).toThrow(/sites\.x\.gateway\.token-file: cannot read .*nope: ENOENT/);
  });

  it('in the loop: places work at the site, pre-warms its gateway, and the next interval sees the data cached', async () => {
    const clock = new VirtualClock();
    const adapters = new Map([['tokyo', new MemorySite('tokyo', clock, 3000)], ['kek', new MemorySite('kek', clock, 3000)]]);
    const batch = new MemoryBatch([...adapters.values()]);
    const registry = DroneRegistry.open(mkdtempSync(join(tmpdir(), 'estuary-co-data-loop-')));
    onTeardown(() => registry.close());
    const c = controllerSchema.parse({ type: 'estuary' }) as EstuaryConfig;
    const settings = (name: string, price: number) => ({ name, quota: 2, min: 0, idleTime: 60_000, minLifetime: 0, bootTimeout: 60_000, costPerCoreHour: price, cost: DEFAULT_COST, machineTypes: ['small'] });
    const coordinator = new Coordinator({
      registry,
      batch,
      sites: adapters,
      siteSettings: [settings('kek', 0.05), settings('tokyo', 0.03)],
      machineTypes: { small: { cores: 2, memory: 4 * 1024 ** 3, features: [] } },
      policy: { controllerFor: () => makeController(c), placement: firstFit, plan: (s) => estuaryPlan(s, c) },
      intervalMs: 1000,
      clock,
      log: pino({ level: 'silent' }),
      prefix: 'es-',
      data,
      markets: true,
      storage: [{ name: 'kek', urls: ['s3://kek/'], egressPerGb: 0.09 }],
    });
    batch.pending = [{ id: '1', partition: 'hybrid', cpus: 1, memoryMb: 100, constraints: [], inputs: [{ url: 's3://kek/run43' }], timeLimitMs: 600_000, submittedAt: 0, reason: 'Resources' }];
    clock.advance(1000);
    const first = await coordinator.tick();
    expect(first.decisions).toMatchObject([{ kind: 'start', site: 'tokyo' }]);
    expect(first.decisions[0]!.reason.why).toMatch(/^1 pending job needs s3:\/\/kek\/run43 \(1 MB, 0 B cached at tokyo\)/);
    expect(first.prewarmed).toEqual({ tokyo: ['s3://kek/run43'] });
    // The prefetch runs in the background; the gateway's own holdings endpoint shows it done.
    await eventually(async () => ((await data.holdings(['s3://kek/run43'])).get('tokyo')?.get('s3://kek/run43') === MB ? true : undefined));
    clock.advance(1000);
    const second = await coordinator.tick();
    expect(second.pools.find((p) => p.pool === 'tokyo/small')!.reason.why).toMatch(/\(1 MB, 1 MB cached at tokyo\)/);
  });
});

describe('holdings from discovery, for sites without a gateway', async () => {
  const { buildHttp } = await import('../../discovery/http.ts');
  const { Registry } = await import('../../discovery/registry.ts');
  const { createLocator } = await import('../../discovery/locator.ts');
  const { createMetrics } = await import('../../discovery/metrics.ts');
  const { NO_GEO_DB } = await import('../../discovery/geoip.ts');
  const { parseSiteMap } = await import('../../discovery/site-map.ts');
  const { heartbeat, testLog } = await import('../discovery/fixtures.ts');
  const registry = new Registry();
  const locator = createLocator(parseSiteMap('sites: []'), NO_GEO_DB);
  const meta = { nowMs: Date.now(), auth: 'signed' as const, skewS: 0, verify: false };
  const holds = (mb: number) => ({ bytes: mb * MB, cvmfs: [{ repo: 'atlas.cern.ch', bytes: mb * MB }], prefixes: [{ prefix: 's3://kek/run42', bytes: mb * MB }] });
  // Two caches at KEK-CLOUD holding different amounts of the same data, one elsewhere.
  registry.apply(heartbeat({ uuid: 'a' }, { cacheKind: 'estuary', site: 'KEK-CLOUD', holds: holds(3) }), meta, (h) => locator.cache(h));
  registry.apply(heartbeat({ uuid: 'b' }, { cacheKind: 'estuary', site: 'KEK-CLOUD', holds: holds(2) }), meta, (h) => locator.cache(h));
  registry.apply(heartbeat({ uuid: 'c' }, { cacheKind: 'estuary', site: 'ELSEWHERE', holds: holds(9) }), meta, (h) => locator.cache(h));
  const app = buildHttp({
    registry,
    locator,
    metrics: createMetrics(registry),
    log: testLog().log,
    trustProxy: false,
    health: () => ({ ok: true }),
    pageFacts: () => ({ version: 't', exchange: 'shoal', broker: 'connected' as const, verify: false, shoalCompat: true, testUrl: 'http://x/', expiryMs: 180_000, rejections: [] }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onTeardown(() => app.close());
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

  it('reads the registry over HTTP and credits each site with the most one of its caches holds', async () => {
    const data = new GatewayData([], { url, sites: new Map([['kek', 'KEK-CLOUD'], ['aws', 'AWS']]), timeoutMs: 5000 });
    const h = await data.holdings(['s3://kek/run42', 'cvmfs://atlas.cern.ch', 's3://kek/run43']);
    expect([...h.get('kek')!]).toEqual([['s3://kek/run42', 3 * MB], ['cvmfs://atlas.cern.ch', 3 * MB], ['s3://kek/run43', 0]]);
    expect([...h.get('aws')!.values()]).toEqual([0, 0, 0]);
    const down = new GatewayData([], { url: 'http://127.0.0.1:9', sites: new Map([['kek', 'KEK-CLOUD']]), timeoutMs: 2000 });
    await expect(down.holdings(['s3://kek/run42'])).rejects.toThrow(/^discovery http:\/\/127\.0\.0\.1:9: reading \/api\/v1\/registry failed: .*; check the coordinator's discovery URL$/);
  });
});
