// `estuary coordinator`'s options: scalar settings as ordinary options, the structured ones
// (machine types, sites, batch system, controller) as options whose values are checked by the
// zod schemas in config.ts. All of them can live in one YAML file under `coordinator:`.

import { option, optional } from '../lib/config/options.ts';
import { bool, duration, hostPort, int, oneOf, str, url } from '../lib/config/values.ts';
import { batchSystemSchema, controllerSchema, machineTypesSchema, sitesSchema, storagesSchema, structured } from './config.ts';

/** How often the loop runs. LSF RC computes demand every 30 s; 10 s reacts faster to a burst. */
export const DEFAULT_INTERVAL_MS = 10_000;
/** Idle time before release. LSF RC's default is 60 min; a cloud bill argues for less. */
export const DEFAULT_IDLE_TIME_MS = 10 * 60_000;
/** A drone whose node has not joined by then is given up (TARDIS has no default; VMs boot in minutes). */
export const DEFAULT_BOOT_TIMEOUT_MS = 10 * 60_000;

export const coordinatorOptions = {
  listen: option(hostPort(), { host: '127.0.0.1', port: 9180 }, 'address of the status API, page and /metrics'),
  stateDir: option(str('DIR'), '/var/lib/estuary/coordinator', 'directory of the drone registry (drones.sqlite)'),
  interval: option(duration(100, 3_600_000), DEFAULT_INTERVAL_MS, 'time between control-loop intervals'),
  idleTime: option(duration(0), DEFAULT_IDLE_TIME_MS, 'a drone idle this long is drained and stopped (per site: idle-time)'),
  bootTimeout: option(duration(1000), DEFAULT_BOOT_TIMEOUT_MS, 'a drone not in the batch system by then is given up (per site: boot-timeout)'),
  minLifetime: option(duration(0), 0, 'no drone is released younger than this (per site: min-lifetime)'),
  prefix: option(str('TEXT'), 'es-', 'start of every drone, instance and node name this coordinator owns'),
  controller: option(
    structured('controller', controllerSchema, 'YAML'),
    controllerSchema.parse({ type: 'threshold' }),
    'the policy: {type: estuary|threshold|linear|relative|glideinwms|slurm-power, ...} (docs/COORDINATOR.md)',
  ),
  batchSystem: optional(structured('batch-system', batchSystemSchema, 'YAML'), 'the batch system: {type: slurm, partitions: [...]}'),
  machineTypes: option(structured('machine-types', machineTypesSchema, 'YAML'), {}, 'machine types by name: {cores, memory, features}'),
  sites: option(structured('sites', sitesSchema, 'YAML'), {}, 'sites by name: {adapter, quota, machine-types, ...}'),
  storage: option(structured('storage', storagesSchema, 'YAML'), {}, 'storage locations by name: {urls: [prefixes], egress-per-gb}'),
  url: optional(url(), 'for `status`: the coordinator to ask (default: http://<listen>)'),
  json: option(bool(), false, 'for `simulate`: print the figures, the time series and the sites\' prices as one JSON object'),
  simMarket: option(
    oneOf(['as-configured', 'spot', 'on-demand'] as const),
    'as-configured',
    'for `simulate`: spot buys every drone started without a market on spot where a site sells it (a baseline given spot); on-demand takes every spot price away',
  ),
  simEvery: option(int(1, 1000), 1, 'for `simulate`: keep every N-th job of the trace (10 is the bench\'s --quick)'),
  discovery: optional(url(), "estuary discovery server: what the caches of sites without a `gateway` hold (its /api/v1/registry)"),
};
