// Which markets each policy is given: every market its real tool can buy, configured as that
// tool's documentation recommends, so no baseline loses to estuary only for being held to on
// demand. Stated per policy in the report, with the prices each scenario offers. Pure.

import type { SimRecord } from './child.ts';

export interface Markets {
  /** Drones are bought on spot wherever a site sells it. */
  readonly spot: boolean;
  /** How the real tool gets there, in one sentence. */
  readonly how: string;
}

export const MARKETS: Readonly<Record<string, Markets>> = {
  'lsf-rc': {
    spot: true,
    how: 'LSF Resource Connector AWS templates with a spot price and an allocation strategy (lowestPrice, diversified or capacityOptimized: with one instance type per site all three pick the same spot pool)',
  },
  'cobald-linear': {
    spot: false,
    how: "on demand only: none of TARDIS's site adapters (CloudStack, OpenStack, Kubernetes, Moab, Slurm, HTCondor, Lancium, Satellite; tardis/adapters/sites/) buys on a spot market",
  },
  'cobald-relative': { spot: false, how: 'on demand only, as cobald-linear (same TARDIS site adapters)' },
  glideinwms: { spot: true, how: 'GlideinWMS factory entries for EC2 spot instances (a spot price on the entry)' },
  'slurm-power': {
    spot: true,
    how: 'ParallelCluster queues with `CapacityType: SPOT` (slurm-gcp: spot/preemptible instance templates)',
  },
  estuary: { spot: true, how: 'both markets at a site with a spot price; the policy prices each drone on both and picks' },
};

export const marketsOf = (policy: string): Markets => MARKETS[policy] ?? { spot: false, how: 'on demand' };

/** "aws: on demand $0.0665, spot $0.0133 per core-hour": what a scenario's sites sell. */
export function pricesText(s: Pick<SimRecord, 'sites'>): string {
  return s.sites
    .map((c) => {
      const spot = c.spotPerCoreHour !== undefined ? `, spot $${c.spotPerCoreHour}` : '';
      return `${c.name}: on demand $${c.costPerCoreHour}${spot} per core-hour`;
    })
    .join('; ');
}

/** The markets one policy used in a scenario, in words. */
export function marketText(policy: string, s: Pick<SimRecord, 'sites'>): string {
  const spotSites = s.sites.filter((site) => site.spotPerCoreHour !== undefined).map((site) => site.name);
  if (spotSites.length === 0) return 'on demand (no site sells spot)';
  const m = marketsOf(policy);
  if (!m.spot) return 'on demand';
  return policy === 'estuary' ? `on demand and spot at ${spotSites.join(', ')}` : `spot at ${spotSites.join(', ')}, on demand elsewhere`;
}
