// The web pages at / and /caches/<id>: triage first (a summary line, broken and late caches at the
// top, state in colour and in words), then recent rejections, then what discovery itself runs
// with. Plain HTML that refreshes itself, no script, fits 1024 px; details live on each cache's
// own page. Pure: facts in, text out (page-model.ts decides, this file draws).

import { esc, htmlPage } from '../lib/page.ts';
import { SHOAL_EXCHANGE } from '../lib/heartbeat.ts';
import type { Departure } from './departures.ts';
import type { CacheEntry } from './registry.ts';
import {
  ago,
  type CacheView,
  counts,
  holdings,
  intervalOf,
  leftView,
  signed,
  size,
  type State,
  triage,
  view,
} from './page-model.ts';
import type { Rejection } from './rejections.ts';

export interface PageFacts {
  readonly version: string;
  readonly exchange: string;
  readonly broker: 'connected' | 'disconnected' | 'refused';
  /** What the broker refuses and what to check, while it does. */
  readonly brokerRefusal?: string;
  readonly verify: boolean;
  readonly shoalCompat: boolean;
  readonly testUrl: string;
  readonly expiryMs: number;
  readonly rejections: readonly Rejection[];
  /** Caches whose agent said goodbye lately; shown as left, never offered to clients. */
  readonly departed?: readonly Departure[];
  /** Whether heartbeats must be signed with one of the server's --hmac-key keys. */
  readonly keyed?: boolean;
  /** The broker discovery listens on, for the command the empty page suggests. */
  readonly amqpUrl?: string;
}

/** Seconds between the page's own refreshes: a heartbeat interval, so a change shows within one. */
const REFRESH_S = 30;

const MARK: Record<State, string> = {
  failing: '✖ failing',
  late: '⚠ late',
  drift: '⚠ clock',
  pending: '… checking',
  healthy: '✔ healthy',
  unchecked: '○ not checked',
  left: '← left',
};

function page(title: string, body: string): string {
  return htmlPage(title, body, REFRESH_S);
}

function facts(f: PageFacts, nowMs: number): string {
  const items = [
    `estuary discovery ${f.version}`,
    `exchange ${f.exchange} (broker ${f.broker})`,
    f.verify ? `verifying caches by fetching ${f.testUrl}` : 'caches not checked (--no-verify)',
    f.shoalCompat ? 'Shoal compatibility on: unsigned heartbeats accepted' : 'signed heartbeats only',
    `caches expire ${Math.round(f.expiryMs / 1000)} s after their last heartbeat`,
    `page at ${new Date(nowMs).toISOString().replace(/\.\d+Z$/, 'Z')}, refreshed every ${REFRESH_S} s`,
  ];
  return `<p class="facts">${items.map(esc).join(' · ')}</p>`;
}

/** A refusing broker stops every heartbeat: said above everything else, not as a grey word. */
function brokerAlarm(f: PageFacts): string {
  if (f.broker !== 'refused') return '';
  return `<p class="sum over">No heartbeat can arrive: ${esc(f.brokerRefusal ?? 'the AMQP broker refuses discovery')}.</p>`;
}

function addressParts(e: CacheEntry): string[] {
  const pub = e.publicIp ?? e.externalIp;
  const parts = [pub ? `public ${pub}` : '', e.privateIp ? `private ${e.privateIp}` : ''].filter(Boolean);
  return parts.length ? parts : [e.hostname];
}

function address(e: CacheEntry): string {
  return `${addressParts(e).join(', ')}, port ${e.port}`;
}

function place(e: CacheEntry): string {
  const l = e.location;
  if (!l) return 'not placed';
  const name = [l.city, l.countryCode].filter(Boolean).join(', ');
  return name || `${l.lat.toFixed(1)}, ${l.lon.toFixed(1)}`;
}

function holdText(e: CacheEntry, testUrl: string, n = 3): string {
  const h = holdings(e, testUrl);
  if (h.length === 0) return '';
  const total = e.holds ? size(e.holds.bytes) : '';
  return `${total}: ${h.slice(0, n).map((x) => `${x.name} (${size(x.bytes)})`).join(', ')}${h.length > n ? ', …' : ''}`;
}

function rejectionsTable(rs: readonly Rejection[], nowMs: number): string {
  if (rs.length === 0) return '<p>No heartbeat was refused in the last hour.</p>';
  const rows = rs.map(
    (r) =>
      `<tr><td>${esc(r.reason)}</td><td class="wrap">${esc(r.hostname ?? '?')}<br><small>${esc(r.uuid ?? '')}</small></td>` +
      `<td class="wrap">${esc(r.sender ?? '')}</td><td class="num">${r.count}</td><td>${esc(ago(nowMs - r.lastAt))}</td><td class="wrap">${esc(r.detail)}</td></tr>`,
  );
  return `<table><thead><tr><th>Reason</th><th>Cache</th><th>Sender</th><th>Times</th><th>Last</th><th>Detail</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The broker URL without its password (the page is not secret), with placeholders for both. */
function brokerForAgents(url: string | undefined): string {
  if (!url) return 'amqp://USER:PASSWORD@BROKER';
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = 'USER';
      u.password = 'PASSWORD';
    }
    return u.href.replace(/\/$/, '');
  } catch {
    return 'amqp://USER:PASSWORD@BROKER';
  }
}

/** An agent command this server would accept: its broker, its exchange, and a key when it needs one. */
export function agentCommand(f: PageFacts): string {
  const parts = ['estuary agent', `--amqp ${brokerForAgents(f.amqpUrl)}`];
  if (f.exchange !== SHOAL_EXCHANGE) parts.push(`--exchange ${f.exchange}`);
  parts.push('--cache-url http://127.0.0.1:3128');
  if (f.keyed || !f.shoalCompat) parts.push('--hmac-key @/etc/estuary/hmac.key');
  return parts.join(' ');
}

function emptyHint(f: PageFacts): string {
  const key =
    f.keyed || !f.shoalCompat
      ? ' The key file holds one of the keys this server was started with (<code>--hmac-key</code>): the shared <code>SECRET</code>, or <code>SITE=SECRET</code> together with <code>--site SITE</code>.'
      : '';
  return (
    `<p><b>No cache has registered yet.</b> Start <code>${esc(agentCommand(f))}</code> next to each cache` +
    `${f.shoalCompat ? ' (or a Shoal agent)' : ''}.${key} A cache that sends heartbeats and still does not appear is listed under “Refused heartbeats” below.</p>`
  );
}

function row(v: CacheView, nowMs: number, f: PageFacts): string {
  const e = v.entry;
  const load = `<span class="${v.overloaded ? 'over' : ''}">${v.loadPercent}%</span>`;
  const notes = [e.site ? `site ${esc(e.site)}` : '', e.auth === 'unsigned' ? 'unsigned (Shoal compatibility)' : '']
    .filter(Boolean)
    .map((n) => `<br><small>${n}</small>`)
    .join('');
  const name = v.state === 'left' ? esc(e.hostname) : `<a href="/caches/${encodeURIComponent(e.id)}">${esc(e.hostname)}</a>`;
  return (
    `<tr class="s-${v.state}"><td>${esc(MARK[v.state])}<br><small>${esc(v.stateText)}</small></td>` +
    `<td class="wrap">${name}${notes}</td>` +
    `<td>${addressParts(e).map(esc).join('<br>')}<br><small>port ${e.port}</small></td><td class="num">${load}</td><td>${esc(place(e))}</td>` +
    `<td>${esc(ago(nowMs - e.lastActive))}</td><td class="wrap">${esc(holdText(e, f.testUrl))}</td></tr>`
  );
}

export function renderPage(entries: Iterable<CacheEntry>, nowMs: number, f: PageFacts): string {
  const views = [...triage(entries, nowMs), ...(f.departed ?? []).map((d) => leftView(d.entry, d.at, nowMs))];
  const c = counts(views);
  const listed = views.length - c.left;
  const summary =
    `<p class="sum"><b>${listed}</b> caches: ${c.healthy} healthy, ${c.late} late, ${c.failing} failing` +
    `${c.drift ? `, ${c.drift} with clock drift` : ''}${c.pending ? `, ${c.pending} being checked` : ''}` +
    `${c.unchecked ? `, ${c.unchecked} not checked` : ''}${c.left ? `; ${c.left} left lately` : ''}; ${f.rejections.length} senders refused lately.</p>`;
  const rows = views.map((v) => row(v, nowMs, f));
  const table =
    views.length === 0
      ? emptyHint(f)
      : `<table><thead><tr><th>State</th><th>Cache</th><th>Address</th><th class="num">Load</th><th>Location</th><th>Heartbeat</th><th>Holds</th></tr></thead><tbody>${rows.join('\n')}</tbody></table>`;
  return page(
    'estuary discovery: caches',
    `<h1>Caches</h1>
${brokerAlarm(f)}
${facts(f, nowMs)}
${summary}
${table}
<h2>Refused heartbeats</h2>
${rejectionsTable(f.rejections, nowMs)}
<p class="facts">Answers: <a href="/nearest">/nearest</a>, <a href="/nearestcvmfs">/nearestcvmfs</a>, <a href="/wpad.dat">/wpad.dat</a>, <a href="/api/v1/caches">/api/v1/caches</a>, <a href="/metrics">/metrics</a>.</p>`,
  );
}

export function renderCachePage(e: CacheEntry, nowMs: number, f: PageFacts): string {
  const v = view(e, nowMs);
  const ver = e.verification;
  const proxy = `http://${(e.publicIp ?? e.externalIp ?? e.privateIp ?? e.hostname).replace(/^(.*:.*)$/, '[$1]')}:${e.port}`;
  const rows: [string, string][] = [
    ['State', `${MARK[v.state]}: ${v.stateText}`],
    ['Uuid', e.id],
    ['Addresses', address(e)],
    ['Kind, upstream', `${e.kind}, ${e.upstream}`],
    ['Load', `${Math.round(e.load)} of ${Math.round(e.maxLoad)} KB/s (${v.loadPercent}%)${v.overloaded ? ', over its maximum' : ''}`],
    ['Location', e.location ? `${place(e)} (${e.location.lat.toFixed(3)}, ${e.location.lon.toFixed(3)}, from ${e.location.source})` : 'not placed: ranked after every placed cache'],
    ['Site', e.site ?? ''],
    ['Last heartbeat', `${ago(nowMs - e.lastActive)}, every ${intervalOf(e)} s${v.missed >= 1 ? `; ${v.missed} missed` : ''}`],
    ['Clock', e.clockInSync ? `in sync (${signed(e.skewS)} s)` : `drift ${signed(e.skewS)} s`],
    ['Authentication', e.auth === 'signed' ? `signed with key ${e.keyId}` : 'unsigned (Shoal compatibility)'],
    ['Access', e.globalAccess ? 'any client' : 'clients of its own network only'],
    [
      'Verification',
      ver.state === 'off'
        ? 'not checked (--no-verify)'
        : `${ver.state}: fetched ${f.testUrl} through ${proxy}` +
          `${ver.checkedAt ? `, last ${ago(nowMs - ver.checkedAt)}` : ', not yet'}` +
          `${ver.ms !== undefined ? ` (${Math.round(ver.ms)} ms)` : ''}` +
          `${ver.error ? `; error: ${ver.error}` : ''}; next check in ${Math.max(0, Math.round((ver.nextAt - nowMs) / 1000))} s`,
    ],
    ['Holds', holdText(e, f.testUrl, 32)],
  ];
  return page(
    `estuary discovery: ${e.hostname}`,
    `<p><a href="/">← all caches</a></p><h1>${esc(e.hostname)}</h1>
<table class="s-${v.state}">${rows.map(([k, val]) => `<tr><th>${esc(k)}</th><td class="wrap">${esc(val)}</td></tr>`).join('')}</table>
${facts(f, nowMs)}`,
  );
}
