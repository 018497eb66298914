// The gateway's and the coordinator's pages for `npm run screenshots`, each healthy and broken,
// drawn by the same code that serves them: the gateway's from a real Metrics registry's text, the
// coordinator's from drones, sites and an interval's report as the coordinator builds them.

import { Metrics } from '../gateway/metrics.ts';
import { buildStatus as gatewayStatus, shownUrl, type StatusFacts } from '../gateway/status/model.ts';
import { renderStatusPage } from '../gateway/status/page.ts';
import { parseProm } from '../gateway/status/prom-text.ts';
import { GATEWAY_PRIMARY_METRICS } from '../lib/metric-names.ts';
import type { TickReport, TimelinePoint } from '../coordinator/coordinator.ts';
import type { Drone, SiteCost } from '../coordinator/model.ts';
import { renderPage as coordinatorPage } from '../coordinator/status/page.ts';
import { buildStatus as coordinatorStatus } from '../coordinator/status/view.ts';
import { timelineSvg } from '../coordinator/status/timeline-svg.ts';
import { holdUndeclaredMessage } from '../coordinator/steer.ts';

const GiB = 1024 ** 3;

export interface Scene {
  readonly name: string;
  readonly html: string;
  /** Files the page loads beside it (the coordinator's chart). */
  readonly files?: Readonly<Record<string, string>>;
  /** Window height in px: tall enough for the whole page. */
  readonly height: number;
}

async function gatewayScene(now: number, broken: boolean): Promise<Scene> {
  const m = new Metrics({ memoryBytes: () => 1.3 * GiB, memoryObjects: () => 48_211, diskBytes: () => (broken ? 499 : 381) * GiB, diskObjects: () => 1_204_377, diskIndexBytes: () => 2 * 1.25 * GiB });
  m.memoryHit.inc(broken ? 20_114 : 812_345);
  m.diskHit.inc(broken ? 3_020 : 201_222);
  m.misses.inc(broken ? 9_870 : 40_211);
  for (let i = 0; i < (broken ? 33_004 : 1_053_778); i++) m.request('GET', broken && i % 3 === 0 ? 502 : 200);
  m.bytesOut.inc(broken ? 2.1e9 : 812e9);
  m.bytesIn.inc(broken ? 0.4e9 : 61e9);
  m.diskEvictions = () => (broken ? 88_210 : 1_022);
  const label = broken ? 'cvmfs' : '@cvmfs';
  m.upstreamLastSuccess.set({ upstream: label }, (now - (broken ? 1_260_000 : 2_000)) / 1000);
  m.upstreamLastFailure.set({ upstream: label }, (now - (broken ? 3_000 : 86_400_000)) / 1000);
  m.upstreamErrors.inc({ upstream: label, reason: 'connection_refused' }, broken ? 4_211 : 2);
  m.s3Requests.inc({ method: 'GET', status_class: '2xx' }, 51_230);
  m.s3Requests.inc({ method: 'PUT', status_class: '2xx' }, 812);
  m.s3Requests.inc({ method: 'GET', status_class: '4xx' }, 17);
  const primary = `${GATEWAY_PRIMARY_METRICS.workerRestarts} ${broken ? 7 : 0}\n${GATEWAY_PRIMARY_METRICS.workerRecentDeaths} ${broken ? 3 : 0}\n`;
  const facts: StatusFacts = {
    now,
    startedAt: now - 3 * 86_400_000,
    mode: broken ? 'reverse' : 'forward',
    workers: 2,
    crashLoopLimit: 5,
    crashLoopWindowS: 60,
    cacheDir: '/var/cache/estuary',
    lockHolder: 4242,
    memory: { bytes: 1.3 * GiB, objects: 48_211, max: 2 * GiB },
    disk: { bytes: (broken ? 499 : 381) * GiB, objects: 1_204_377, max: 500 * GiB, full: broken, free: broken ? 0 : 610 * GiB, indexBytes: 2 * 1.25 * GiB },
    rings: broken ? [{ name: 'cvmfs', servers: ['http://s1a.example.org:8000', 'http://s1b.example.org:8000'] }] : [],
    allowDest: broken ? [] : ['@cvmfs'],
    downServers: broken ? ['http://s1a.example.org:8000', 'http://s1b.example.org:8000'] : [],
    lastErrors: new Map(broken ? [['cvmfs', 'connection refused: connect ECONNREFUSED 192.0.2.10:8000']] : []),
    unanswered: broken ? ['worker 2 (pid 8112) did not answer within 5 s'] : [],
    s3Buckets: ['kek-data'],
    top: [
      { name: 'atlas.cern.ch', bytes: 212 * GiB },
      { name: 'cms.cern.ch', bytes: 101 * GiB },
      { name: 's3://kek-data/run42', bytes: 61 * GiB },
      { name: 'frontier.cern.ch/atlr', bytes: 3.2 * GiB },
    ],
    largest: [
      { url: shownUrl('s3://kek-data/run42/raw/file-0007.root'), bytes: 4.1 * GiB },
      { url: shownUrl('http://cvmfs-stratum-one.cern.ch/cvmfs/atlas.cern.ch/data/3f/9a1c0e5b7d2f44c81a9e0b6d3c2f1e0a9b8c7d6eC'), bytes: 1.9 * GiB },
      { url: shownUrl('s3://kek-data/run42/raw/file-0003.root'), bytes: 1.2 * GiB },
    ],
  };
  const samples = parseProm((await m.text()) + primary);
  return { name: `gateway-${broken ? 'broken' : 'healthy'}`, html: renderStatusPage(gatewayStatus(samples, facts), facts), height: broken ? 1420 : 1300 };
}

const cost = (budgetPerDay?: number): SiteCost => ({
  spotInterruptionRate: 0.05,
  egressPerGb: 0.09,
  link: { egressPerGb: 0.02, bandwidthBps: 1.25e9, rttMs: 20 },
  links: {},
  bootLatencyMs: 90_000,
  budgetPerDay,
});

function drone(now: number, id: string, site: string, state: Drone['state'], ageS: number, why: string): Drone {
  const createdAt = now - ageS * 1000;
  return { id, site, machineType: 'c5.2xlarge', state, createdAt, stateSince: createdAt, lastBusyAt: now, instance: {}, reason: { rule: 'estuary', why } };
}

function coordinatorScene(now: number, broken: boolean): Scene {
  const drones = [
    drone(now, 'es-aws-1', 'aws-tokyo', 'available', 5400, 'running job 81234'),
    drone(now, 'es-aws-2', 'aws-tokyo', 'available', 95, 'node joined the batch system'),
    drone(now, 'es-aws-3', 'aws-tokyo', broken ? 'error' : 'booting', 40, broken ? 'instance failed: InsufficientInstanceCapacity' : '12 pending jobs need 4 cores'),
    drone(now, 'es-os-1', 'openstack-kek', 'draining', 700, 'no pending job fits; draining'),
  ];
  const sites = [
    { name: 'aws-tokyo', quota: 20, costPerCoreHour: 0.048, cost: cost(50) },
    { name: 'openstack-kek', quota: 8, costPerCoreHour: 0, cost: cost() },
  ];
  const report: TickReport = {
    at: now,
    batchHealthy: !broken,
    batchError: broken ? 'squeue: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host; could not find slurm.conf' : null,
    batchEverRead: true,
    unhealthySites: broken ? ['aws-tokyo'] : [],
    siteProblems: broken ? { 'aws-tokyo': '3 instances failed in a row (InsufficientInstanceCapacity)' } : {},
    unplaceable: broken ? [{ job: '81301', why: 'needs 128 cores; the largest machine type has 64' }] : [],
    unplaceableCount: broken ? 1 : 0,
    warnings: broken ? [holdUndeclaredMessage()] : [],
    history: broken
      ? { source: null, jobs: 0, skipped: 0, error: 'sacct: error: Slurm accounting storage is disabled', readAt: now - 60_000, coveredS: 0, narrowedS: null }
      : { source: 'accounting', jobs: 4_812, skipped: 0, error: null, readAt: now - 120_000, coveredS: 604_800, narrowedS: null },
    pending: broken ? 57 : 12,
    pools: [{ pool: 'c5.2xlarge', supply: 24, demand: 28.5, allocation: 0.81, utilisation: 0.76, pendingJobs: 12, reason: { rule: 'linear', why: 'demand follows utilisation' } }],
    decisions: [],
    prewarmed: { 'aws-tokyo': ['s3://kek-data/run42/'] },
  };
  const points: TimelinePoint[] = Array.from({ length: 60 }, (_, i) => ({
    at: now - (60 - i) * 60_000,
    pending: Math.max(0, Math.round(40 - i * 0.6 + (broken && i > 40 ? (i - 40) * 2 : 0))),
    home: 64,
    drones: Math.min(4, Math.floor(i / 10)),
    live: Math.min(4, Math.floor(i / 10)),
  }));
  const html = coordinatorPage(coordinatorStatus(drones, sites, () => 8, report, now)).replace('src="/timeline.svg"', 'src="timeline.svg"');
  return { name: `coordinator-${broken ? 'broken' : 'healthy'}`, html, files: { 'timeline.svg': timelineSvg(points) }, height: broken ? 1430 : 1200 };
}

export async function moreScenes(now: number): Promise<Scene[]> {
  return [await gatewayScene(now, false), await gatewayScene(now, true), coordinatorScene(now, false), coordinatorScene(now, true)];
}
