// `npm run screenshots`: renders the discovery page in each state an operator meets (healthy,
// late, failing, clock drift, not checked, left, refused heartbeats, empty, one cache's page) from real
// registry entries, the gateway's and the coordinator's pages healthy and broken
// (screenshot-scenes.ts), and photographs each with headless Chromium at 1024 px into
// docs/screenshots/. Needs Debian's chromium (apt-get install chromium); nothing leaves the host.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PageFacts, renderCachePage, renderPage } from '../discovery/page.ts';
import { type CacheEntry, Registry } from '../discovery/registry.ts';
import { moreScenes } from './screenshot-scenes.ts';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const OUT = new URL('../docs/screenshots/', import.meta.url).pathname;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
/** Debian's pngquant, when installed, makes each picture a third of its size for the repository. */
const PNGQUANT = '/usr/bin/pngquant';

const facts = (over: Partial<PageFacts> = {}): PageFacts => ({
  version: '0.1.0',
  exchange: 'shoal',
  broker: 'connected',
  verify: true,
  shoalCompat: true,
  testUrl: 'http://cvmfs-stratum-one.cern.ch/cvmfs/cms.cern.ch/.cvmfspublished',
  expiryMs: 180_000,
  rejections: [],
  ...over,
});

let n = 0;
function cache(host: string, city: string, country: string, lat: number, lon: number, patch: (e: CacheEntry) => void = () => undefined, verify = true): CacheEntry {
  const r = new Registry();
  const hb = {
    uuid: `uuid-${++n}-${host}`,
    hostname: host,
    public_ip: `192.0.2.${n}`,
    private_ip: `10.0.0.${n}`,
    squid_port: 3128,
    load: 20_000 * n,
    max_load: 122_000,
    timestamp: NOW / 1000,
    cache_type: 'squid',
    upstream: 'both',
  };
  const { entry } = r.apply(hb as never, { nowMs: NOW, auth: 'signed', keyId: 'site-2026', skewS: 1, verify }, () => ({ lat, lon, city, countryCode: country, source: 'site-map' }) as never);
  entry.verification = verify ? { state: 'ok', nextAt: NOW + 240_000, failures: 0, checkedAt: NOW - 60_000, ms: 14 } : entry.verification;
  entry.holds = { bytes: 7.3e9, cvmfs: [{ repo: 'atlas.cern.ch', bytes: 5.1e9 }, { repo: 'cms.cern.ch', bytes: 2.1e9 }], prefixes: [{ prefix: 's3://kek-data/run42', bytes: 1.2e8 }] };
  patch(entry);
  return entry;
}

const fleet = [
  cache('squid1.kek.jp', 'Tsukuba', 'JP', 36.08, 140.08, (e) => (e.site = 'KEK')),
  cache('gw-cloud-1.example.org', 'Tokyo', 'JP', 35.68, 139.69, (e) => (e.load = 150_000)),
  cache('squid2.fnal.gov', 'Batavia', 'US', 41.85, -88.31, (e) => {
    e.site = 'FNAL';
    e.verification = { state: 'failed', nextAt: NOW + 30_000, failures: 3, error: 'HTTP 403 (destination_ip_prohibited: destination cvmfs-stratum-one.cern.ch is not in the allow-list (--allow-dest))', checkedAt: NOW - 12_000 };
  }),
  cache('cache.gridka.de', 'Karlsruhe', 'DE', 49.01, 8.4, (e) => {
    e.lastActive = NOW - 140_000;
    e.intervalS = 30;
  }),
  cache('squid.desy.de', 'Hamburg', 'DE', 53.55, 9.99, (e) => {
    e.clockInSync = false;
    e.skewS = -312;
  }),
];
const rejections: PageFacts['rejections'] = [
  { reason: 'bad-signature', detail: 'signed with key site-2025, which this server does not have', uuid: 'c0ffee00-1234', hostname: 'squid3.kek.jp', sender: 'agent@10.1.2.3', count: 12, firstAt: NOW - 600_000, lastAt: NOW - 20_000 },
  { reason: 'invalid', detail: 'squid_port: expected a number 1-65535', uuid: 'deadbeef-9', hostname: 'old-shoal-agent.example', sender: 'guest', count: 3, firstAt: NOW - 900_000, lastAt: NOW - 300_000 },
];

const pages: [string, string, Readonly<Record<string, string>>?, number?][] = [
  ['discovery-triage', renderPage(fleet, NOW, facts({ rejections, departed: [{ entry: cache('gw-cloud-2.example.org', 'Osaka', 'JP', 34.69, 135.5), at: NOW - 95_000 }] }))],
  ['discovery-unchecked', renderPage([cache('squid1.kek.jp', 'Tsukuba', 'JP', 36.08, 140.08, () => undefined, false)], NOW, facts({ verify: false }))],
  ['discovery-empty', renderPage([], NOW, facts({ broker: 'disconnected', rejections: rejections.slice(0, 1), keyed: true, amqpUrl: 'amqp://discovery:secret@mq.example.org:5672' }))],
  ['discovery-cache-failing', renderCachePage(fleet[2]!, NOW, facts())],
  ...(await moreScenes(NOW)).map((s) => [s.name, s.html, s.files, s.height] as [string, string, Record<string, string>?, number?]),
];

const dir = mkdtempSync(join(tmpdir(), 'estuary-screenshots-'));
try {
  for (const [name, html, files, height = 900] of pages) {
    const file = join(dir, `${name}.html`);
    writeFileSync(file, html);
    for (const [f, text] of Object.entries(files ?? {})) writeFileSync(join(dir, f), text);
    execFileSync(CHROMIUM, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--user-data-dir=${join(dir, 'profile')}`,
      '--hide-scrollbars', `--window-size=1024,${height}`, `--screenshot=${join(OUT, `${name}.png`)}`, `file://${file}`,
    ], { stdio: 'ignore', timeout: 60_000 });
    if (existsSync(PNGQUANT)) {
      try {
        execFileSync(PNGQUANT, ['--force', '--skip-if-larger', '--ext', '.png', '64', join(OUT, `${name}.png`)], { stdio: 'ignore' });
      } catch {
        // pngquant leaves the picture as it was when it cannot make it smaller (exit 98/99)
      }
    }
    console.log(`docs/screenshots/${name}.png`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
