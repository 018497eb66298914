// The web page at /: every cache with status, load, location and what it holds. Plain HTML with
// no script, so it reads in a terminal browser on a head node. Pure: entries in, text out.

import { type CacheEntry, isVerified } from './registry.ts';

const esc = (s: unknown) =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

function status(e: CacheEntry): string {
  if (e.verification.state === 'failed')
    return `verification failed (${e.verification.failures}×): ${e.verification.error ?? ''}`;
  if (e.verification.state === 'pending') return 'not yet verified';
  return isVerified(e) ? 'verified' : 'unverified';
}

function holds(e: CacheEntry): string {
  if (!e.holds) return '';
  const items = [...e.holds.cvmfs.map((c) => c.repo), ...e.holds.prefixes.map((p) => p.prefix)];
  const mib = (e.holds.bytes / 2 ** 20).toFixed(0);
  return `${mib} MiB: ${items.slice(0, 6).join(', ')}${items.length > 6 ? ', …' : ''}`;
}

function row(e: CacheEntry, nowMs: number): string {
  const l = e.location;
  const cells = [
    e.hostname,
    [e.publicIp ?? e.externalIp, e.privateIp].filter(Boolean).join(' / '),
    e.port,
    e.kind,
    e.upstream,
    `${Math.round(e.load)} / ${Math.round(e.maxLoad)}`,
    [l?.city, l?.countryCode].filter(Boolean).join(', '),
    l ? `${l.lat.toFixed(2)}, ${l.lon.toFixed(2)} (${l.source})` : 'unknown',
    e.site ?? '',
    `${Math.round((nowMs - e.lastActive) / 1000)} s ago`,
    status(e),
    e.clockInSync ? 'in sync' : `drift ${Math.round(e.skewS)} s`,
    e.auth === 'signed' ? `signed (${e.keyId})` : 'unsigned (Shoal compatibility)',
    e.globalAccess ? 'global' : 'site only',
    holds(e),
  ];
  return `<tr>${cells.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`;
}

const HEAD = [
  'Hostname',
  'Addresses',
  'Port',
  'Kind',
  'Upstream',
  'Load KB/s',
  'City',
  'Lat, lon',
  'Site',
  'Last heartbeat',
  'Status',
  'Clock',
  'Authentication',
  'Access',
  'Holds',
];

export function renderPage(entries: Iterable<CacheEntry>, nowMs: number): string {
  const rows = [...entries].sort((a, b) => a.hostname.localeCompare(b.hostname)).map((e) => row(e, nowMs));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>estuary discovery: caches</title>
<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;text-align:left}</style>
</head><body>
<h1>Caches (${rows.length})</h1>
<p>Nearest-cache answers: <a href="/nearest">/nearest</a>, <a href="/nearestcvmfs">/nearestcvmfs</a>,
<a href="/wpad.dat">/wpad.dat</a>, <a href="/api/v1/caches">/api/v1/caches</a>.</p>
<table><thead><tr>${HEAD.map((h) => `<th>${h}</th>`).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>
</body></html>
`;
}
