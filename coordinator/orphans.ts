// The start-up sweep of one site: every instance it runs under our prefix that the registry does
// not know is an orphan that would bill forever, so its node is removed and it is stopped. Run in
// the site's own turn (coordinator/site-calls.ts), so a site whose list hangs delays no other.

import type { Logger } from '../lib/log.ts';
import type { BatchSystem } from './batch/types.ts';
import type { DroneRegistry } from './registry.ts';
import type { SiteAdapter } from './sites/types.ts';

export interface SweepDeps {
  readonly registry: DroneRegistry;
  readonly batch: BatchSystem;
  readonly prefix: string;
  readonly log: Logger;
}

/** Stops the site's orphans; returns their ids ([] when the site cannot list). */
export async function sweepOrphans(name: string, site: SiteAdapter, o: SweepDeps): Promise<string[]> {
  let ids: string[];
  try {
    ids = await site.list(o.prefix);
  } catch (err) {
    o.log.warn({ site: name, err: (err as Error).message }, 'cannot list instances; orphans at this site are checked next start');
    return [];
  }
  // Read after the list: a drone requested meanwhile is known, never taken for an orphan.
  const known = new Set(o.registry.all().filter((d) => d.state !== 'down').map((d) => d.id));
  const orphans = ids.filter((i) => !known.has(i));
  for (const id of orphans) {
    o.log.warn({ site: name, drone: id }, 'orphan instance (unknown to the registry): stopping it');
    try {
      await o.batch.remove(id, true);
    } catch {
      // not a node, or busy: stopping the instance makes it go
    }
    await site.stop(id, {}).catch((err: Error) => o.log.error({ site: name, drone: id, err: err.message }, 'cannot stop orphan'));
  }
  return orphans;
}
