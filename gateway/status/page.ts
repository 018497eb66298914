// The gateway's status page at /estuary/v1/status (and / in forward mode): what is wrong first, in
// words, then traffic and hit ratio, the two cache tiers, the upstreams, the workers, the S3
// endpoint and what the cache holds. Discovery's look (lib/page.ts); no script. Pure.

import { esc, htmlPage } from '../../lib/page.ts';
import { GATEWAY_PATHS } from '../../lib/metric-names.ts';
import { ago, bytes, type StatusFacts, type StatusView, type UpstreamView } from './model.ts';

/** Seconds between the page's own refreshes. */
const REFRESH_S = 15;

const pct = (x: number | undefined): string => (x === undefined ? '–' : `${(x * 100).toFixed(x >= 0.995 || x < 0.1 ? 1 : 0)}%`);
/** A row of cells: HTML as given, numbers right-aligned with thousands separators. */
const row = (cells: readonly (string | number)[], cls = ''): string =>
  `<tr${cls ? ` class="${cls}"` : ''}>${cells.map((c) => (typeof c === 'number' ? `<td class="num">${c.toLocaleString('en')}</td>` : `<td>${c}</td>`)).join('')}</tr>`;
/** Headers of numeric columns are right-aligned like their cells. */
const NUMERIC = new Set(['requests', 'objects', 'failed attempts']);
const table = (head: readonly string[], rows: readonly string[]): string =>
  `<table><thead><tr>${head.map((h) => `<th${NUMERIC.has(h) ? ' class="num"' : ''}>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;

function headline(v: StatusView, f: StatusFacts): string {
  if (v.problems.length > 0) return v.problems.map((p) => `<p class="sum over">⚠ ${esc(p)}</p>`).join('\n');
  const up = v.upstreams.filter((u) => u.state === 'up').length;
  return `<p class="sum">✔ Serving: hit ratio ${pct(v.hitRatio)} over ${v.requests.toLocaleString('en')} requests, ${up} upstream${up === 1 ? '' : 's'} answering, disk ${pct(f.disk.bytes / f.disk.max)} full.</p>`;
}

function traffic(v: StatusView): string {
  const looked = v.hits.memory + v.hits.disk + v.misses;
  const share = (n: number) => (looked === 0 ? '–' : pct(n / looked));
  return table(
    ['answered', 'requests', 'share'],
    [
      row(['hits from memory', v.hits.memory, share(v.hits.memory)]),
      row(['hits from disk', v.hits.disk, share(v.hits.disk)]),
      row(['misses (fetched upstream)', v.misses, share(v.misses)]),
      row(['all requests answered', v.requests, '']),
    ],
  ) + `<p>${esc(bytes(v.bytesOut))} sent to clients, ${esc(bytes(v.bytesIn))} received from upstreams.</p>`;
}

function tiers(v: StatusView, f: StatusFacts): string {
  const free = f.disk.free === undefined ? 'unknown' : bytes(f.disk.free);
  return table(
    ['tier', 'objects', 'bytes', 'of', 'used', 'notes'],
    [
      row(['memory', f.memory.objects, esc(bytes(f.memory.bytes)), esc(bytes(f.memory.max)), pct(f.memory.bytes / f.memory.max), '']),
      row(
        ['disk', f.disk.objects, esc(bytes(f.disk.bytes)), esc(bytes(f.disk.max)), pct(f.disk.bytes / f.disk.max), esc(`${free} free on the file system; ${v.evictions.toLocaleString('en')} evicted to make room; the index holds ${bytes(f.disk.indexBytes)} of memory${f.disk.full ? '; FULL' : ''}`)],
        f.disk.full ? 's-failing' : '',
      ),
    ],
  );
}

/** A ring's servers, those skipped after a recent failure marked so. */
function servers(u: UpstreamView, down: readonly string[]): string {
  if (u.servers.length === 0) return '';
  const list = u.servers.map((s) => (down.includes(s) ? `<b>${esc(s)} (failed lately, tried last)</b>` : esc(s)));
  return `<br><small>${list.join(', ')}</small>`;
}

function upstreamRow(u: UpstreamView, down: readonly string[]): string {
  const mark = u.state === 'failing' ? '✖ failing' : u.state === 'up' ? '✔ answering' : '○ not used yet';
  return row(
    [
      esc(mark),
      `${esc(u.name)}${servers(u, down)}`,
      esc(ago(u.lastOkS)),
      esc(ago(u.lastFailS)),
      u.errors,
      esc(u.error ?? ''),
    ],
    u.state === 'failing' ? 's-failing' : u.state === 'unused' ? 's-unchecked' : '',
  );
}

function upstreams(v: StatusView, f: StatusFacts): string {
  if (v.upstreams.length === 0) {
    return `<p>No upstream contacted yet.${f.mode === 'forward' ? ` Allowed destinations: ${esc(f.allowDest.join(', ') || 'none')}.` : ''}</p>`;
  }
  const rows = [...v.upstreams].sort((a, b) => Number(b.state === 'failing') - Number(a.state === 'failing')).map((u) => upstreamRow(u, f.downServers));
  return table(['state', f.mode === 'reverse' ? 'ring' : 'destination rule', 'last answer', 'last failure', 'failed attempts', 'error'], rows);
}

function workers(v: StatusView, f: StatusFacts): string {
  const n = f.workers === 0 ? 'one process, no supervisor' : `${f.workers} worker${f.workers > 1 ? 's' : ''} under a supervisor`;
  const stuck = v.backlogOverflows > 0 ? ` (${v.backlogOverflows} of them ended for not reading their channel)` : '';
  return `<p>${esc(n)} · ${v.restarts} restart${v.restarts === 1 ? '' : 's'} since start${stuck} · ${v.recentDeaths} death${v.recentDeaths === 1 ? '' : 's'} in the last ${f.crashLoopWindowS} s (the gateway gives up at ${f.crashLoopLimit})${f.workers > 0 ? ` · ${bytes(v.backlog)} held for the slowest worker to read` : ''}</p>`;
}

function s3(v: StatusView, f: StatusFacts): string {
  if (f.s3Buckets.length === 0) return '<p>Off (no --s3).</p>';
  const head = `<p>Buckets: ${f.s3Buckets.map(esc).join(', ')}</p>`;
  if (v.s3.length === 0) return `${head}<p>No S3 request yet.</p>`;
  return head + table(['method', 'status', 'requests'], v.s3.map((r) => row([esc(r.method), esc(r.statusClass), r.n])));
}

function holds(f: StatusFacts): string {
  if (f.top.length === 0) return '<p>The cache is empty.</p>';
  const top = table(['repository or prefix', 'bytes'], f.top.slice(0, 10).map((t) => row([`<span class="wrap">${esc(t.name)}</span>`, esc(bytes(t.bytes))])));
  const big = table(['largest objects', 'bytes'], f.largest.map((o) => row([`<span class="wrap">${esc(o.url)}</span>`, esc(bytes(o.bytes))])));
  return top + big;
}

export function renderStatusPage(v: StatusView, f: StatusFacts): string {
  const uptime = ago((f.now - f.startedAt) / 1000).replace(/ ago$/, '');
  const facts = [
    `${f.mode} mode`,
    `cache ${f.cacheDir}${f.lockHolder ? `, locked by process ${f.lockHolder}` : ''}`,
    `up ${uptime}`,
    `page at ${new Date(f.now).toISOString().replace(/\.\d+Z$/, 'Z')}, refreshed every ${REFRESH_S} s`,
  ];
  return htmlPage(
    'estuary gateway',
    `<h1>estuary gateway</h1>
${headline(v, f)}
<p class="facts">${facts.map(esc).join(' · ')}</p>
<h2>Traffic</h2>
${traffic(v)}
<h2>Cache</h2>
${tiers(v, f)}
<h2>Upstreams</h2>
${upstreams(v, f)}
<h2>Workers</h2>
${workers(v, f)}
<h2>S3 endpoint</h2>
${s3(v, f)}
<h2>What the cache holds</h2>
${holds(f)}
<p class="facts">For machines: <a href="${GATEWAY_PATHS.metrics}">${GATEWAY_PATHS.metrics}</a>, <a href="${GATEWAY_PATHS.summary}">${GATEWAY_PATHS.summary}</a>, <a href="${GATEWAY_PATHS.health}">${GATEWAY_PATHS.health}</a>.</p>`,
    REFRESH_S,
  );
}
