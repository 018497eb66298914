// Discovery's HTTP port is not a proxy: an absolute-form request for one of its own paths must not
// be answered as if it were, or a "cache" advertised at discovery's own address would pass
// verification whenever --test-url's path is one of discovery's endpoints.

import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_GEO_DB } from '../../../discovery/geoip.ts';
import { buildHttp } from '../../../discovery/http.ts';
import { createLocator } from '../../../discovery/locator.ts';
import { createMetrics } from '../../../discovery/metrics.ts';
import { Registry } from '../../../discovery/registry.ts';
import { parseSiteMap } from '../../../discovery/site-map.ts';
import { proxyFetch } from '../../../lib/proxy-fetch.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { testLog } from '../fixtures.ts';

afterAll(runTeardowns);

describe('an absolute-form request to discovery', () => {
  it('is refused with 400, while the same path in origin form is answered', async () => {
    const registry = new Registry();
    const app = buildHttp({
      registry,
      locator: createLocator(parseSiteMap('sites: []'), NO_GEO_DB),
      metrics: createMetrics(registry),
      log: testLog().log,
      trustProxy: false,
      health: () => ({ ok: true }),
      pageFacts: () => {
        throw new Error('not used');
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    onTeardown(() => app.close());
    const port = (app.server.address() as AddressInfo).port;
    const through = await proxyFetch(`http://127.0.0.1:${port}`, 'http://any.example/healthz', { timeoutMs: 5000 });
    expect(through.ok).toBe(false);
    expect(through.status).toBe(400);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
