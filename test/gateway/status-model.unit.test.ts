// The status page's decisions, without a server: numbers read back from Prometheus text, and the
// problems said at the top (a process whose numbers are missing, upstream failing, deaths towards
// the crash-loop limit, a disk that fills before --disk-cache, no destination allowed, a disk index
// still being read, cache directories it cannot read), how cached objects are named, and the
// workers' views merged.

import { describe, expect, it } from 'vitest';
import { mergeReports } from '../../gateway/cluster/gather.ts';
import { buildStatus, shownUrl, type StatusFacts } from '../../gateway/status/model.ts';
import { renderStatusPage } from '../../gateway/status/page.ts';
import { parseProm, total } from '../../gateway/status/prom-text.ts';

const NOW = 1_800_000_000_000;
const facts = (over: Partial<StatusFacts> = {}): StatusFacts => ({
  now: NOW,
  startedAt: NOW - 60_000,
  mode: 'forward',
  workers: 1,
  crashLoopLimit: 5,
  crashLoopWindowS: 60,
  cacheDir: '/c',
  memory: { bytes: 0, objects: 0, max: 1e9 },
  disk: { bytes: 0, objects: 0, max: 1e10, full: false, free: 5e10, indexBytes: 0 },
  rings: [],
  allowDest: ['@cvmfs'],
  lastErrors: new Map(),
  unanswered: [],
  downServers: [],
  s3Buckets: [],
  top: [],
  largest: [],
  ...over,
});

const TEXT = `# HELP x
estuary_gateway_cache_hits_total{tier="memory"} 30
estuary_gateway_cache_hits_total{tier="disk"} 10
estuary_gateway_cache_misses_total 10
estuary_gateway_upstream_last_success_timestamp_seconds{upstream="s1"} ${NOW / 1000 - 100}
estuary_gateway_upstream_last_failure_timestamp_seconds{upstream="s1"} ${NOW / 1000 - 5}
estuary_gateway_upstream_last_success_timestamp_seconds{upstream="@cvmfs"} ${NOW / 1000 - 1}
estuary_gateway_worker_recent_deaths 4
estuary_gateway_requests_total{method="GET",status_class="2xx"} 45
estuary_gateway_requests_total{method="GET",status_class="5xx"} 5
`;

describe('gateway status model', () => {
  it('reads sums by label from Prometheus text', () => {
    const s = parseProm(TEXT);
    expect(total(s, 'estuary_gateway_cache_hits_total')).toBe(40);
    expect(total(s, 'estuary_gateway_cache_hits_total', { tier: 'disk' })).toBe(10);
    expect(parseProm('m{a="x \\"q\\""} 2')[0]!.labels.a).toBe('x "q"');
  });

  it('says when the disk index is still being read, and which cache directories cannot be read', () => {
    const disk = { bytes: 0, objects: 30_001, max: 1e10, full: false, free: 5e10, indexBytes: 0 };
    const reading = buildStatus([], facts({ disk: { ...disk, unread: 30_000 } }));
    expect(reading.problems).toEqual([expect.stringMatching(/^The disk index is still being read .*\(30,000 files to go\)/)]);
    const bad = buildStatus([], facts({ disk: { ...disk, unindexed: ['/c/v1/4e'] } }));
    expect(bad.problems).toEqual([expect.stringMatching(/^The cache cannot read \/c\/v1\/4e: .*not served, counted or purged/)]);
    expect(buildStatus([], facts({ disk })).problems).toEqual([]);
  });

  it('says when disk hits are read rather than mapped from the page cache, and why', () => {
    const disk = { bytes: 0, objects: 1, max: 1e10, full: false, free: 5e10, indexBytes: 0 };
    const unmapped = buildStatus([], facts({ disk: { ...disk, unmapped: 'lib/native was not built (x)' } }));
    expect(unmapped.problems).toEqual([expect.stringMatching(/^Disk hits are read into each worker .*: lib\/native was not built \(x\)\.$/)]);
  });

  it('computes the hit ratio and says each problem at the top', () => {
    const v = buildStatus(parseProm(TEXT), facts({ lastErrors: new Map([['s1', 'connection refused']]), disk: { bytes: 9e9, objects: 1, max: 1e10, full: false, free: 1e8, indexBytes: 0 } }));
    expect(v.hitRatio).toBe(0.8);
    expect(v.requests).toBe(50);
    expect(v.upstreams.find((u) => u.name === 's1')).toMatchObject({ state: 'failing', error: 'connection refused' });
    expect(v.upstreams.find((u) => u.name === '@cvmfs')?.state).toBe('up');
    expect(v.problems[0]).toMatch(/^Upstream s1 is failing: connection refused \(last answer 100 s ago\)/);
    expect(v.problems[1]).toMatch(/^4 worker deaths in the last 60 s: at 5 the gateway gives up/);
    expect(v.problems[2]).toMatch(/^Only 95 MiB free on the cache's file system/);
    const html = renderStatusPage(v, facts());
    expect(html.indexOf('Upstream s1 is failing')).toBeLessThan(html.indexOf('<h2>'));
  });

  it('is quiet when all is well, and says when nothing may be proxied', () => {
    expect(buildStatus([], facts()).problems).toEqual([]);
    expect(buildStatus([], facts()).hitRatio).toBeUndefined();
    expect(buildStatus([], facts({ allowDest: [] })).problems).toEqual([expect.stringMatching(/No destination is allowed/)]);
  });

  it('never says it serves well when a process did not answer, and names it first', () => {
    const missing = ['worker 2 (pid 81) did not answer within 5 s', 'worker 3 (pid 82) exited before it answered'];
    const v = buildStatus(parseProm(TEXT), facts({ unanswered: missing }));
    expect(v.problems[0]).toMatch(/^Not counted: worker 2 \(pid 81\) did not answer within 5 s\. .*stuck/);
    expect(v.problems[1]).toMatch(/^Not counted: worker 3 \(pid 82\) exited before it answered\. The numbers below leave out what it served\.$/);
    const html = renderStatusPage(buildStatus([], facts({ unanswered: missing })), facts({ unanswered: missing }));
    expect(html).not.toMatch(/Serving/);
    expect(html).toMatch(/class="sum over">⚠ Not counted: worker 2/);
  });

  it('says when a worker stops reading what the primary sends it, and when one was ended for it', () => {
    const v = buildStatus(
      parseProm('estuary_gateway_worker_backlog_bytes 3145728\nestuary_gateway_worker_backlog_overflows_total 1\n'),
      facts({ workers: 2 }),
    );
    expect(v.problems[0]).toMatch(/^A worker is not reading what the primary sends it \(3\.0 MiB waiting\): at 8\.0 MiB it is ended and replaced\.$/);
    expect(v.problems[1]).toMatch(/^1 worker stopped reading .* and was ended and replaced \(estuary_gateway_worker_backlog_overflows_total\)/);
    expect(renderStatusPage(v, facts({ workers: 2 }))).toMatch(/1 of them ended for not reading their channel.*3\.0 MiB held for the slowest worker to read/);
    expect(buildStatus(parseProm('estuary_gateway_worker_backlog_bytes 20000\n'), facts({ workers: 2 })).problems).toEqual([]);
  });

  it('names cached objects without the rest of an S3 key or a query string', () => {
    expect(shownUrl('s3://kek-data/projA/cohort-2026/ids.h5')).toBe('s3://kek-data/projA/…');
    expect(shownUrl('s3://kek-data/top.h5')).toBe('s3://kek-data/top.h5');
    expect(shownUrl('http://h.example/a/b?X-Amz-Signature=abc&t=1')).toBe('http://h.example/a/b?…');
    expect(shownUrl('reverse://cvmfs/cvmfs/a.org/data/x')).toBe('reverse://cvmfs/cvmfs/a.org/data/x');
  });

  it('takes the latest error per upstream, every server tried last and any full disk over the workers', () => {
    const r = (errors: [string, { message: string; at: number }][], down: string[], diskFull: boolean) => ({ metrics: [], errors, down, diskFull });
    const merged = mergeReports([
      r([['s1', { message: 'old', at: 1 }], ['s2', { message: 'x', at: 5 }]], ['http://a'], false),
      r([['s1', { message: 'new', at: 9 }]], ['http://b', 'http://a'], true),
    ]);
    expect(new Map(merged.errors)).toEqual(new Map([['s1', { message: 'new', at: 9 }], ['s2', { message: 'x', at: 5 }]]));
    expect([...merged.down].sort()).toEqual(['http://a', 'http://b']);
    expect(merged.diskFull).toBe(true);
  });
});
