// The status page: plain HTML, no JavaScript, refreshed by a meta tag. Every value is escaped.

import { esc, htmlPage } from '../../lib/page.ts';
import { historyText, reasonText, type StatusView } from './view.ts';

/** Seconds between the page's own refreshes: the coordinator decides about this often. */
const REFRESH_S = 10;

/**
 * Dollars as an admin reads them: cents for amounts from 10 cents up, two significant digits below
 * (a drone's first minutes cost fractions of a cent, and "$0.00" would say it costs nothing).
 */
export function money(x: number): string {
  if (x === 0 || x >= 0.1) return `$${x.toFixed(2)}`;
  if (x < 0.0001) return '<$0.0001';
  return `$${x.toPrecision(2).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
}

/** What is wrong, in words, above everything else: an admin reads the top of the page first. */
function problems(v: StatusView): string {
  const out: string[] = [];
  if (v.registryError) out.push(`The drone registry cannot be written: ${v.registryError}. Nothing is started or stopped until it can.`);
  if (v.batch === 'unreachable') out.push(`The batch system is unreachable: ${v.batchError ?? 'no answer'}. No drone is started or stopped until it answers.`);
  for (const s of v.sites.filter((x) => !x.healthy)) out.push(`Site ${s.name} is unhealthy${s.problem ? `: ${s.problem}` : ''}; no new drone goes there.`);
  for (const s of v.sites.filter((x) => x.budgetPerDay !== null && x.budgetPerDay > 0 && x.spentToday >= x.budgetPerDay)) {
    out.push(`Site ${s.name} has spent its budget for today (${money(s.spentToday)} of ${money(s.budgetPerDay!)}).`);
  }
  if (v.history?.error && v.history.jobs === 0) out.push(`Run times are not learned: ${v.history.error}. Decisions use time limits and the configured runtime.`);
  out.push(...v.warnings);
  if (v.unplaceableCount > 0) out.push(`${v.unplaceableCount} pending job${v.unplaceableCount > 1 ? 's' : ''} no pool can run (listed below).`);
  return out.map((p) => `<p class="sum over">⚠ ${esc(p)}</p>`).join('\n');
}

export function renderPage(v: StatusView): string {
  const sites = v.sites
    .map(
      (s) =>
        `<tr><td>${esc(s.name)}</td><td>${s.drones} / ${s.quota}</td><td>${s.healthy ? 'yes' : `<b>no</b>${s.problem ? `: ${esc(s.problem)}` : ''}`}</td><td>$${s.costPerCoreHour}${s.spotPerCoreHour === null ? '' : ` (spot $${s.spotPerCoreHour})`}</td><td>$${s.cost.toFixed(4)}</td><td>${money(s.spentToday)}${s.budgetPerDay === null ? '' : ` of ${money(s.budgetPerDay)}`}</td></tr>`,
    )
    .join('');
  const prewarmed = Object.entries(v.prewarmed)
    .map(([site, urls]) => `<li>${esc(site)}: ${urls.map(esc).join(', ')}</li>`)
    .join('');
  const pools = v.pools
    .map(
      (p) =>
        `<tr><td>${esc(p.pool)}</td><td>${p.supply}</td><td>${Math.round(p.demand * 100) / 100}</td><td>${p.allocation.toFixed(2)}</td><td>${p.utilisation.toFixed(2)}</td><td>${p.pendingJobs}</td><td>${esc(reasonText(p.reason))}</td></tr>`,
    )
    .join('');
  const drones = v.drones
    .map(
      (d) =>
        `<tr class="s-${esc(d.state)}"><td class="wrap">${esc(d.id)}</td><td>${esc(d.site)}</td><td>${esc(d.machineType)}${d.market === 'spot' ? ' (spot)' : ''}</td><td>${esc(d.state)}</td><td>${d.ageS} s</td><td>$${d.cost.toFixed(4)}</td><td>${esc(reasonText(d.reason))}</td></tr>`,
    )
    .join('');
  const unplaceable = v.unplaceable.map((u) => `<tr><td>${esc(u.job)}</td><td>${esc(u.why)}</td></tr>`).join('');
  return htmlPage(
    'estuary coordinator',
    `<h1>estuary coordinator</h1>
${problems(v)}
<p class="facts">Batch system: ${v.batch === 'unreachable' ? `<b>unreachable</b>: ${esc(v.batchError ?? 'no answer')}` : esc(v.batch)} &middot; pending jobs: ${v.pendingJobs}${v.history ? ` &middot; run times: ${esc(historyText(v.history))}` : ''} &middot; as of ${esc(new Date(v.at).toISOString())}, refreshed every ${REFRESH_S} s</p>
<h2>Jobs by state</h2>
<p><img src="/timeline.svg" alt="pending, running at home and in the cloud over time" width="720" height="360"></p>
<h2>Sites</h2>
<table><tr><th>site</th><th>drones / quota</th><th>healthy</th><th>per core-hour</th><th>cost so far</th><th>today / budget</th></tr>${sites}</table>
<h2>Pools</h2>
<table><tr><th>pool</th><th>supply (cores)</th><th>demand</th><th>allocation</th><th>utilisation</th><th>pending jobs</th><th>last decision</th></tr>${pools}</table>
${prewarmed ? `<h2>Pre-warming</h2>\n<ul>${prewarmed}</ul>\n` : ''}<h2>Drones</h2>
<table><tr><th>drone</th><th>site</th><th>type</th><th>state</th><th>age</th><th>cost so far</th><th>last decision</th></tr>${drones || '<tr><td colspan="7">no drones</td></tr>'}</table>${
      v.unplaceableCount
        ? `\n<h2>Pending jobs no pool can run (${v.unplaceableCount})</h2>\n<table><tr><th>job</th><th>why</th></tr>${unplaceable}</table>`
        : ''
    }`,
    REFRESH_S,
  );
}
