// The status page: plain HTML, no JavaScript, refreshed by a meta tag. Every value is escaped.

import { esc, htmlPage } from '../../lib/page.ts';
import { reasonText, type StatusView } from './view.ts';

/** Seconds between the page's own refreshes: the coordinator decides about this often. */
const REFRESH_S = 10;

export function renderPage(v: StatusView): string {
  const sites = v.sites
    .map(
      (s) =>
        `<tr><td>${esc(s.name)}</td><td>${s.drones} / ${s.quota}</td><td>${s.healthy ? 'yes' : `<b>no</b>${s.problem ? `: ${esc(s.problem)}` : ''}`}</td><td>$${s.costPerCoreHour}${s.spotPerCoreHour === null ? '' : ` (spot $${s.spotPerCoreHour})`}</td><td>$${s.cost.toFixed(4)}</td><td>$${s.spentToday.toFixed(2)}${s.budgetPerDay === null ? '' : ` of $${s.budgetPerDay.toFixed(2)}`}</td></tr>`,
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
${v.registryError ? `<p class="facts"><b>The drone registry cannot be written</b>: ${esc(v.registryError)}; nothing is started or stopped until it can.</p>\n` : ''}<p class="facts">Batch system: ${v.batch === 'unreachable' ? `<b>unreachable</b>: ${esc(v.batchError ?? 'no answer')}` : esc(v.batch)} &middot; pending jobs: ${v.pendingJobs} &middot; as of ${esc(new Date(v.at).toISOString())}, refreshed every ${REFRESH_S} s</p>
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
