// The pools of one snapshot: one per site × machine type (× market where the site sells spot and
// the policy buys both), each with its live drones and what the batch system says of their nodes.
// Pure: the loop hands in the registry's drones and the last node list.

import { ABSENT, UNKNOWN_NODE } from './batch/types.ts';
import type { MachineType } from './config.ts';
import { type Drone, droneFeatures, type NodeView, poolKey, type PoolView, type SiteView } from './model.ts';

export interface PoolSite {
  readonly name: string;
  readonly machineTypes: readonly string[];
  readonly cost?: SiteView['cost'];
}

export function buildPools(
  sites: readonly PoolSite[],
  machineTypes: Readonly<Record<string, MachineType>>,
  live: readonly Drone[],
  nodes: ReadonlyMap<string, NodeView> | undefined,
  markets: boolean,
): PoolView[] {
  const pools: PoolView[] = [];
  for (const site of sites)
    for (const type of site.machineTypes) {
      const mt = machineTypes[type]!;
      const kinds = markets && site.cost?.spotPerCoreHour !== undefined ? (['on-demand', 'spot'] as const) : (['on-demand'] as const);
      for (const market of kinds)
        pools.push({
          key: poolKey(site.name, type, market),
          site: site.name,
          machineType: type,
          // With markets, on-demand is said explicitly: an ec2 site configured `spot: true`
          // must not buy spot for a drone the policy priced on demand.
          ...(markets ? { market } : {}),
          cores: mt.cores,
          memoryMb: Math.floor(mt.memory / 1_048_576),
          features: droneFeatures(site.name, type, mt.features),
          drones: live
            // Without spot pools every drone of the type counts in its one pool.
            .filter((d) => d.site === site.name && d.machineType === type && (kinds.length === 1 || (d.market === 'spot') === (market === 'spot')))
            // Unread (batch system unreachable): unknown, so nothing is concluded from it.
            .map((drone) => ({ drone, node: nodes ? (nodes.get(drone.id) ?? ABSENT) : UNKNOWN_NODE })),
        });
    }
  return pools;
}
