// The coordinator's structured configuration: machine types, sites, the batch system and the
// controller, as zod schemas with their defaults as named constants. Scalar settings (listen
// address, intervals, idle time) are ordinary options in options.ts; the structured ones are
// options too, whose value type runs these schemas, so one YAML file holds everything and a
// mistake anywhere ends start-up with one line naming the key. Pure: no I/O.

import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { keyHint } from '../lib/config/suggest.ts';
import { ValueError, type ValueType } from '../lib/config/values.ts';
import { bitsPerSecond, bytes, durationIn, durationMs, feature, keyed, name, timeoutMs } from './config-values.ts';
import { coordinatorErrors } from './errors.ts';

export { durationIn, nameSchema } from './config-values.ts';


export const machineTypeSchema = keyed(z.strictObject({
  cores: z.number().int().min(1).max(1024),
  memory: bytes,
  /** Extra node features, beside the site_<name> and type_<name> every drone carries. */
  features: z.array(feature).default([]),
}));
export type MachineType = z.infer<typeof machineTypeSchema>;

/** Defaults of each controller, from the tool it reproduces (see docs/COORDINATOR.md). */
export const CONTROLLER_DEFAULTS = {
  // COBalD LinearController: low_utilisation=0.5, high_allocation=0.5, rate=1 (cores per second).
  linear: { lowUtilisation: 0.5, highAllocation: 0.5, rate: 1 },
  // COBalD RelativeSupplyController: low_scale=0.9, high_scale=1.1.
  relative: { lowUtilisation: 0.5, highAllocation: 0.5, lowScale: 0.9, highScale: 1.1 },
  // LSF Resource Connector THRESHOLD: with no policy set, any pending job creates demand at once.
  threshold: { rules: [{ jobs: 1, pendingFor: 0 }] },
  // GlideinWMS frontend: ramp_up_attenuation=3, reserve_idle=5, max_idle=100, curb_vms_idle=5,
  // max_vms_idle=100, relative_to_queue=1.15, old idle = idle for 10 minutes.
  glideinwms: {
    rampUpAttenuation: 3,
    reserveIdle: 5,
    maxIdle: 100,
    curbIdle: 5,
    maxVmsIdle: 100,
    relativeToQueue: 1.15,
    oldIdleAfter: 600_000,
  },
  // estuary's own policy: finish the waiting work within the turnaround; a job that gives no
  // time limit is expected to run `runtime`. Both an hour: with runtime = turnaround every job
  // needs its own slot, so work of unknown length bursts as wide as quotas allow, like the others.
  // Placed jobs are steered to their site's drones with a feature constraint (coordinator/steer.ts).
  estuary: { turnaround: 3_600_000, runtime: 3_600_000, steer: true, wanPerGb: 0.02 },
  // Slurm power saving as AWS ParallelCluster and slurm-gcp write slurm.conf: ResumeRate=0, no
  // limit on nodes resumed per minute (aws-parallelcluster-cookbook,
  // cookbooks/aws-parallelcluster-slurm/templates/default/slurm/slurm.conf.erb; slurm-gcp
  // scripts/conf.py, cloud_parameters resume_rate). SuspendTime and ResumeTimeout are the site's
  // idle-time and boot-timeout (docs/COORDINATOR.md, "slurm-power").
  'slurm-power': { resumeRate: 0 },
} as const;

const unit = z.number().min(0).max(1);

/**
 * Far above any cloud's egress price (cents a GB), and low enough that a GB's weight times the
 * bytes of any input stays a finite number of dollars in which a cent still shows.
 */
const WAN_PER_GB_MAX = 1000;

export const controllerSchema = keyed(z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('linear'),
    lowUtilisation: unit.default(CONTROLLER_DEFAULTS.linear.lowUtilisation),
    highAllocation: unit.default(CONTROLLER_DEFAULTS.linear.highAllocation),
    rate: z.number().positive().default(CONTROLLER_DEFAULTS.linear.rate),
  }),
  z.strictObject({
    type: z.literal('relative'),
    lowUtilisation: unit.default(CONTROLLER_DEFAULTS.relative.lowUtilisation),
    highAllocation: unit.default(CONTROLLER_DEFAULTS.relative.highAllocation),
    lowScale: z.number().gt(0).lt(1).default(CONTROLLER_DEFAULTS.relative.lowScale),
    highScale: z.number().gt(1).default(CONTROLLER_DEFAULTS.relative.highScale),
  }),
  z.strictObject({
    type: z.literal('threshold'),
    rules: z
      .array(keyed(z.strictObject({ jobs: z.number().int().min(1), pendingFor: durationMs.default(0) })))
      .min(1)
      .default(CONTROLLER_DEFAULTS.threshold.rules.map((r) => ({ ...r }))),
  }),
  z.strictObject({
    type: z.literal('glideinwms'),
    rampUpAttenuation: z.number().min(1).default(CONTROLLER_DEFAULTS.glideinwms.rampUpAttenuation),
    reserveIdle: z.number().int().min(0).default(CONTROLLER_DEFAULTS.glideinwms.reserveIdle),
    maxIdle: z.number().int().min(1).default(CONTROLLER_DEFAULTS.glideinwms.maxIdle),
    curbIdle: z.number().int().min(1).default(CONTROLLER_DEFAULTS.glideinwms.curbIdle),
    maxVmsIdle: z.number().int().min(1).default(CONTROLLER_DEFAULTS.glideinwms.maxVmsIdle),
    relativeToQueue: z.number().min(1).default(CONTROLLER_DEFAULTS.glideinwms.relativeToQueue),
    oldIdleAfter: durationMs.default(CONTROLLER_DEFAULTS.glideinwms.oldIdleAfter),
  }),
  z.strictObject({
    type: z.literal('estuary'),
    /** The waiting work should be finished within this, from now. */
    turnaround: durationMs.default(CONTROLLER_DEFAULTS.estuary.turnaround),
    /** Expected run time of a job that gives no time limit; 0 would make such work free of time. */
    runtime: durationIn(1000).default(CONTROLLER_DEFAULTS.estuary.runtime),
    /** Make placed jobs require their site's drones (site_<name>), so they run where placed. */
    steer: z.boolean().default(CONTROLLER_DEFAULTS.estuary.steer),
    /** A feature every home node carries: steered jobs may still run at home (site_x|home). */
    homeFeature: feature.optional(),
    /**
     * Dollars per GB an input crosses a WAN link to reach the site, on top of any egress price:
     * what the policy weighs a shared link's bytes at even where moving them is free.
     */
    wanPerGb: z.number().min(0).max(WAN_PER_GB_MAX, `at most ${WAN_PER_GB_MAX} dollars a GB`).default(CONTROLLER_DEFAULTS.estuary.wanPerGb),
    /**
     * New jobs arrive held by the feature estuary_hold (a job_submit plugin adds it; no node has
     * it): the coordinator replaces it with the job's placement, or lifts it, within an interval.
     */
    hold: z.boolean().default(false),
  }).refine((c) => !c.hold || c.steer, {
    path: ['hold'],
    message: 'hold: true needs steer: true: only steering replaces the hold, so every new job would wait for ever; turn steer on or hold off',
  }),
  z.strictObject({
    type: z.literal('slurm-power'),
    /** Nodes resumed per minute at most; 0 is no limit (Slurm's ResumeRate). */
    resumeRate: z.number().int().min(0).default(CONTROLLER_DEFAULTS['slurm-power'].resumeRate),
  }),
]));
export type ControllerConfig = z.infer<typeof controllerSchema>;
export type EstuaryConfig = Extract<ControllerConfig, { type: 'estuary' }>;

export const netnsSiteSchema = keyed(z.strictObject({
  /** Host bridge the drones' veths join; the slurmctld must listen on its address. */
  bridge: z.string().regex(/^[A-Za-z0-9_.-]{1,15}$/, 'an interface name of at most 15 characters'),
  /** Drone addresses are taken from this IPv4 /24 (x.y.z.0/24), .10 upwards. */
  subnet: z.string().regex(/^\d+\.\d+\.\d+\.0\/24$/, 'an IPv4 /24 such as 10.77.0.0/24'),
  /** The bridge's own address in that subnet: the drones' default gateway. */
  gateway: z.string().regex(/^\d+\.\d+\.\d+\.\d+$/, 'an IPv4 address'),
  slurmd: z.string().default('/usr/sbin/slurmd'),
  /** slurm.conf the drones' slurmd read (the cluster's, or a copy). */
  slurmConf: z.string(),
  /** Where each drone keeps its spool, log and pid file (one directory per drone). */
  runDir: z.string(),
  /** tbf rate on each drone's veth, e.g. "1gbit": the emulated WAN link; none when unset. */
  bandwidth: z.string().regex(/^\d+(kbit|mbit|gbit)$/, 'a rate such as 100mbit or 1gbit').optional(),
  /**
   * Run inside each instance before its slurmd, like a cloud image's user data (mounts, caches):
   * with ESTUARY_DRONE_*, ESTUARY_DRONE_ADDRESS and ESTUARY_DRONE_DIR (the instance's own
   * directory, deleted with it) set; a non-zero exit fails the instance.
   */
  boot: z.string().min(1).optional(),
}));

export const commandSiteSchema = keyed(z.strictObject({
  /** Each is run with /bin/sh -c and ESTUARY_DRONE_* in the environment (docs/COORDINATOR.md). */
  start: z.string().min(1),
  stop: z.string().min(1),
  status: z.string().min(1),
  /** Prints the ids of every instance the site runs for this coordinator, one a line. */
  list: z.string().min(1).optional(),
  timeout: timeoutMs.default(60_000),
}));

export const openstackSiteSchema = keyed(z.strictObject({
  /** Keystone v3, e.g. https://keystone.example.org:5000/v3 */
  authUrl: z.string().url(),
  username: z.string().min(1),
  /** The password, or @FILE to read it from a file (kept out of the config and of `ps`). */
  password: z.string().min(1),
  projectName: z.string().min(1),
  userDomainName: z.string().default('Default'),
  projectDomainName: z.string().default('Default'),
  /** Catalog region of the compute endpoint; the first one when unset. */
  region: z.string().optional(),
  flavor: z.string().min(1),
  image: z.string().min(1),
  network: z.string().optional(),
  keyName: z.string().optional(),
  /** File whose text becomes the server's user data, with {{id}}, {{features}}, {{cores}}, {{memory_mb}} filled in. */
  userData: z.string().optional(),
  timeout: timeoutMs.default(30_000),
}));

export const ec2SiteSchema = keyed(z.strictObject({
  region: z.string().min(1),
  /** Another EC2-compatible endpoint (a private cloud's, or moto's in tests); AWS's when unset. */
  endpoint: z.string().url().optional(),
  imageId: z.string().min(1),
  instanceType: z.string().min(1),
  subnetId: z.string().optional(),
  securityGroupIds: z.array(z.string().min(1)).optional(),
  keyName: z.string().optional(),
  /** Spot instances: cheaper, and EC2 may reclaim them (the drone is then drained and replaced). */
  spot: z.boolean().default(false),
  /** Highest spot price per hour, in dollars as text ("0.05"); the on-demand price when unset. */
  maxPrice: z.string().optional(),
  /** File whose text becomes the user data, with {{id}}, {{features}}, {{cores}}, {{memory_mb}} filled in. */
  userData: z.string().optional(),
  timeout: timeoutMs.default(30_000),
}));

/**
 * The cost model's defaults (docs/COORDINATOR.md, "The cost model", gives each source). A site
 * with no prices costs nothing, as the core always assumed: only what an admin states is charged.
 */
export const COST_DEFAULTS = {
  /** Dollars per core-hour on demand: 0, a site whose cost is already paid (home, on-premise cloud). */
  costPerCoreHour: 0,
  /**
   * Spot reclaims per instance-hour. AWS's Spot Instance Advisor puts most instance types in its
   * "<5 % per month" bucket (under 0.0001 per hour); 0.01 is deliberately pessimistic, so spot is
   * chosen only where the saving is real even when a region is short of capacity.
   */
  spotInterruptionRate: 0.01,
  /** Dollars per GB leaving a site or storage location: 0 unless stated (research networks). */
  egressPerGb: 0,
  /** A site's link to storage, bits per second: 1 Gbit/s, a campus or VPN uplink (the KEK–AWS VPN). */
  bandwidth: 1e9,
  /** Round trip to storage: 0 unless stated (netns links here add none). */
  rtt: 0,
  /** Request to a node taking jobs: 2 minutes, an EC2 instance with cloud-init and slurmd. */
  bootLatency: 120_000,
} as const;

/** How a site reaches one storage location; unset values are the site's own. */
export const linkSchema = keyed(z.strictObject({
  /** Dollars per GB out of the storage location to this site. */
  egressPerGb: z.number().min(0).optional(),
  bandwidth: bitsPerSecond.optional(),
  rtt: durationMs.optional(),
}));

/** A storage location: where the inputs under these URL prefixes live, and what leaving it costs. */
export const storageSchema = keyed(z.strictObject({
  urls: z.array(z.string().min(1)).min(1),
  /** Dollars per GB out of this location to any site without its own link price. */
  egressPerGb: z.number().min(0).default(COST_DEFAULTS.egressPerGb),
}));
export const storagesSchema = z.record(name, storageSchema);
export type StorageConfig = z.infer<typeof storageSchema>;

/** The site's estuary gateway, asked what it holds and told what to prefetch (docs/COORDINATOR.md). */
export const gatewayLinkSchema = keyed(z.strictObject({
  /** Base URL of the gateway, e.g. http://10.1.0.5:3128 */
  url: z.string().url(),
  /** File holding the gateway's --admin-token (needed for prefetch). */
  tokenFile: z.string().min(1).optional(),
  timeout: timeoutMs.default(10_000),
}));

export const siteSchema = keyed(z
  .strictObject({
    adapter: z.enum(['netns', 'command', 'openstack', 'ec2']),
    /** Most drones this site may run at once, all machine types together. */
    quota: z.number().int().min(0),
    /** Drones kept even with no work (COBalD Standardiser minimum), per machine type. */
    min: z.number().int().min(0).default(0),
    machineTypes: z.array(name).min(1),
    /** Dollars per core-hour on demand: the cost shown beside each drone, and the policy's price. */
    costPerCoreHour: z.number().min(0).default(COST_DEFAULTS.costPerCoreHour),
    /** Dollars per core-hour on the spot market; the site offers spot only when this is set. */
    spotPerCoreHour: z.number().min(0).optional(),
    /** Expected spot reclaims per instance-hour. */
    spotInterruptionRate: z.number().min(0).max(60).default(COST_DEFAULTS.spotInterruptionRate),
    /** Dollars per GB leaving this site: results sent home. */
    egressPerGb: z.number().min(0).default(COST_DEFAULTS.egressPerGb),
    /** The site's link to storage locations without a `links` entry. */
    bandwidth: bitsPerSecond.default(COST_DEFAULTS.bandwidth),
    rtt: durationMs.default(COST_DEFAULTS.rtt),
    /** From request until a drone's node takes jobs, as the policy plans it. */
    bootLatency: durationMs.default(COST_DEFAULTS.bootLatency),
    /** Dollars per UTC day; no drone is started that would take the site past it. */
    budgetPerDay: z.number().positive().optional(),
    /** Per storage location (by name, under `storage`): egress price, bandwidth, round trip. */
    links: z.record(name, linkSchema).default({}),
    /** The site's estuary gateway, for holdings and pre-warming. */
    gateway: gatewayLinkSchema.optional(),
    /** The site name its caches give discovery (their heartbeats' site); this site's name by default. */
    discoverySite: z.string().min(1).max(128).optional(),
    // The bounds of --idle-time, --boot-timeout and --min-lifetime (coordinator/options.ts).
    idleTime: durationIn(0).optional(),
    bootTimeout: durationIn(1000).optional(),
    minLifetime: durationIn(0).optional(),
    netns: netnsSiteSchema.optional(),
    command: commandSiteSchema.optional(),
    openstack: openstackSiteSchema.optional(),
    ec2: ec2SiteSchema.optional(),
  })
  .superRefine((s, ctx) => {
    if (!s[s.adapter])
      ctx.addIssue({ code: 'custom', path: [s.adapter], message: `adapter ${s.adapter} needs a "${s.adapter}:" section` });
  }));
export type SiteConfig = z.infer<typeof siteSchema>;

/** How often finished jobs are read by default: run times change slowly, and sacct asks slurmdbd. */
export const HISTORY_EVERY_MS = 300_000;

export const batchSystemSchema = keyed(z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('slurm'),
    /** Partitions whose pending jobs are demand; drones join them (the hybrid partitions). */
    partitions: z.array(z.string().min(1)).min(1),
    /** SLURM_CONF for squeue/sinfo/scontrol; their default when unset. */
    slurmConf: z.string().optional(),
    /** Directory of squeue, sinfo and scontrol; PATH when unset. */
    binDir: z.string().optional(),
    timeout: timeoutMs.default(30_000),
    /**
     * Where run times are learned from (sacct): `auto` Slurm's database, else its job completion
     * log; `accounting` or `completion` only that one; `off` none (time limits and `runtime`).
     */
    history: z.enum(['auto', 'accounting', 'completion', 'off']).default('auto'),
    historyEvery: durationMs.default(HISTORY_EVERY_MS),
  }),
]));
export type BatchSystemConfig = z.infer<typeof batchSystemSchema>;

export const machineTypesSchema = z.record(name, machineTypeSchema);
export const sitesSchema = z.record(name, siteSchema);

/**
 * Keys the object at `path` should have, as far as the other issues name them (a required key
 * missing), plus every key any coordinator schema knows: the candidates for "did you mean".
 */
function keysAt(issues: readonly z.core.$ZodIssue[], path: readonly PropertyKey[]): string[] {
  const kebab = (k: string) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const here = issues
    .filter((i) => i.path.length === path.length + 1 && path.every((p, n) => i.path[n] === p))
    .map((i) => kebab(String(i.path[path.length])));
  return [...new Set([...here, ...KNOWN_KEYS])];
}

/** Every key of the coordinator's structured sections, for suggestions. */
const KNOWN_KEYS = [
  'adapter', 'quota', 'min', 'machine-types', 'cost-per-core-hour', 'spot-per-core-hour', 'spot-interruption-rate', 'egress-per-gb',
  'bandwidth', 'rtt', 'boot-latency', 'budget-per-day', 'links', 'gateway', 'discovery-site', 'idle-time', 'boot-timeout',
  'min-lifetime', 'netns', 'command', 'openstack', 'ec2', 'cores', 'memory', 'features', 'type', 'partitions', 'slurm-conf',
  'bin-dir', 'timeout', 'urls', 'turnaround', 'runtime', 'steer', 'home-feature', 'rules', 'jobs', 'pending-for', 'start',
  'status', 'stop', 'list', 'url', 'token-file', 'history', 'history-every',
];

/**
 * One zod issue as an error line's parts: the path with keys as the file writes them
 * (kebab-case), and the message. A name the user chose that is refused (a site's, a storage
 * location's) is quoted as written, with the reason names must follow, not zod's "Invalid key".
 */
export function describeIssue(issue: z.core.$ZodIssue): { path: string[]; message: string } {
  const kebab = (k: string) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  if (issue.code === 'invalid_key')
    return {
      path: issue.path.slice(0, -1).map((k) => kebab(String(k))),
      message: `the name "${String(issue.path.at(-1))}": ${issue.issues[0]?.message ?? issue.message}`,
    };
  return {
    path: issue.path.map((k) => kebab(String(k))),
    message: issue.message.replace(/"([a-z][A-Za-z]*)"/g, (_, k: string) => `"${kebab(k)}"`),
  };
}

/** A config option whose value is structured: YAML/JSON in a file, or YAML text in a flag/env. */
export function structured<T>(key: string, schema: z.ZodType<T>, placeholder: string): ValueType<T> {
  return {
    expected: `YAML or JSON (see docs/COORDINATOR.md)`,
    placeholder,
    parse(raw) {
      let value = raw;
      if (typeof raw === 'string') {
        try {
          value = parseYaml(raw);
        } catch {
          throw new ValueError('expected YAML or JSON');
        }
      }
      const r = schema.safeParse(value);
      if (r.success) return r.data;
      const kebab = (k: string) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      // A misspelt key shows as an unknown key and, often, a required one missing ("quta: 2":
      // quota received undefined): the unknown key is the mistake, so it is named first.
      const unknown = r.error.issues.find((i) => i.code === 'unrecognized_keys');
      if (unknown && unknown.code === 'unrecognized_keys') {
        const where = [key, ...unknown.path.map((k) => kebab(String(k)))].join('.');
        const known = keysAt(r.error.issues, unknown.path);
        const names = unknown.keys.map((k) => `"${kebab(k)}"${keyHint(kebab(k), known)}`);
        throw coordinatorErrors.badConfig(where, `unknown key ${names.join(', ')}`);
      }
      const issue = describeIssue(r.error.issues[0]!);
      throw coordinatorErrors.badConfig([key, ...issue.path].join('.'), issue.message);
    },
    // Shown as the file would be written: kebab-case keys, and a password only as @FILE.
    format: (v) =>
      JSON.stringify(v, (k, x: unknown) => (k === 'password' && typeof x === 'string' && !x.startsWith('@') ? '<hidden>' : x)).replace(/"([a-z]+[A-Z][A-Za-z]*)":/g, (_, k: string) => `"${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}":`),
  };
}
