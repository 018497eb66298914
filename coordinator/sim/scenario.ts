// A simulator scenario file: the coordinator's own configuration (machine types, sites with
// their cost models, storage locations, intervals) plus what only a simulation needs: the trace,
// the site's fixed "home" nodes, and per site the facts the coordinator cannot configure (how
// long boots really take, how often the API fails, how often spot is reclaimed, where the site
// sits). Parsed with the coordinator's zod schemas, so a scenario is also a config a real
// coordinator would accept. docs/BENCHMARKING.md, "Scenario files", shows one.

import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { parseDuration } from '../../lib/config/values.ts';
import { controllerSchema, type ControllerConfig, describeIssue, durationIn, machineTypesSchema, type MachineType, nameSchema, siteSchema, type SiteConfig, storageSchema, type StorageConfig } from '../config.ts';
import { coordinatorErrors } from '../errors.ts';
import { parseTrace, type Trace } from './trace.ts';

const duration = z.union([z.number().nonnegative(), z.string()]).transform((v, ctx) => {
  try {
    return typeof v === 'number' ? v * 1000 : parseDuration(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected a duration such as 90s, 5m or 1h' });
    return z.NEVER;
  }
});
const rate = z.union([z.number().positive(), z.string().regex(/^\d+(\.\d+)?(kbit|mbit|gbit)$/, 'a rate such as 100mbit or 10gbit')]).transform((v) => {
  if (typeof v === 'number') return v;
  const m = /^(\d+(?:\.\d+)?)(kbit|mbit|gbit)$/.exec(v)!;
  return Number(m[1]) * { kbit: 1e3, mbit: 1e6, gbit: 1e9 }[m[2] as 'kbit'];
});

/** What the simulated site really does, whatever the coordinator's config believes. */
const simSiteSchema = z.strictObject({
  /** Request to node in the batch system. */
  boot: duration.default(120_000),
  /** Each boot takes `boot` plus a uniform random part of this. */
  bootJitter: duration.default(0),
  /** Chance that one API call (deploy, status, stop, list) fails. */
  apiErrorRate: z.number().min(0).max(1).default(0),
  /** Spot reclaims per instance-hour that actually happen. */
  spotInterruptionRate: z.number().min(0).default(0),
  /** Instances the site really has room for; a deploy beyond is refused (the cloud's own quota). */
  capacity: z.number().int().positive().optional(),
  /** The storage location this site sits at: reading it is local, free and not WAN traffic. */
  at: z.string().optional(),
  /** Market of a drone the coordinator starts without naming one (an ec2 site's `spot:`). */
  spot: z.boolean().default(false),
});

const homeSchema = z.strictObject({
  nodes: z.number().int().min(0),
  cores: z.number().int().positive(),
  memoryMb: z.number().positive().default(64_000),
  /** Feature every home node carries; estuary's policy may steer jobs to "site_x|feature". */
  feature: z.string().default('home'),
  at: z.string().optional(),
  /** The home cluster's link to storage locations it does not sit at. */
  bandwidth: rate.default(10e9),
});

const camel = (k: string) => k.replace(/[-_]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const camelDeep = (v: unknown): unknown =>
  v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), x])) : v;

const scenarioSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/),
  description: z.string().default(''),
  trace: z.string().min(1),
  /** Where results go: the storage location outputs are sent to. */
  homeLocation: z.string().optional(),
  home: z.preprocess(camelDeep, homeSchema),
  // The bounds of --interval, --idle-time and --boot-timeout: an interval of 0 would never end.
  interval: durationIn(100, 3_600_000).default(30_000),
  idleTime: durationIn(0).default(600_000),
  bootTimeout: durationIn(1000).default(1_800_000),
  /** The simulation stops here even if work remains (reported as unfinished). */
  maxTime: duration.default(14 * 86_400_000),
  machineTypes: machineTypesSchema,
  storage: z.record(nameSchema, storageSchema).default({}),
  sites: z.record(nameSchema, z.unknown()),
  /** A controller to use when none is given on the command line. */
  controller: controllerSchema.optional(),
});

export interface SimSiteConfig extends z.infer<typeof simSiteSchema> {
  readonly name: string;
  readonly config: SiteConfig;
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly file: string;
  readonly trace: Trace;
  readonly home: z.infer<typeof homeSchema>;
  readonly homeLocation?: string;
  readonly intervalMs: number;
  readonly idleTimeMs: number;
  readonly bootTimeoutMs: number;
  readonly maxTimeMs: number;
  readonly machineTypes: Readonly<Record<string, MachineType>>;
  readonly storage: Readonly<Record<string, StorageConfig>>;
  readonly sites: readonly SimSiteConfig[];
  readonly controller?: ControllerConfig;
}

function fail(file: string, err: z.ZodError, prefix: string[] = []): never {
  // Keys as the file writes them: "boot-time", not the schema's bootTime.
  const issue = describeIssue(err.issues[0]!);
  throw coordinatorErrors.badScenario(file, [...prefix, ...issue.path].join('.') || '(top)', issue.message);
}

/** Reads a scenario from its text; `file` names it in errors and anchors the trace path. */
export function parseScenario(text: string, file: string, readTrace = (p: string) => readFileSync(p, 'utf8')): Scenario {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw coordinatorErrors.badScenario(file, '(file)', `not YAML/JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const top = scenarioSchema.safeParse(camelDeep(raw));
  if (!top.success) fail(file, top.error);
  const s = top.data;
  const sites: SimSiteConfig[] = [];
  for (const [name, value] of Object.entries(s.sites)) {
    const { sim, ...rest } = (camelDeep(value) ?? {}) as { sim?: unknown };
    const simParsed = simSiteSchema.safeParse(camelDeep(sim ?? {}));
    if (!simParsed.success) fail(file, simParsed.error, ['sites', name, 'sim']);
    // The coordinator's own schema checks the rest; the adapter is the simulator's, so any
    // adapter section given is replaced by an inert command one.
    const cfg = siteSchema.safeParse({ ...rest, adapter: 'command', command: { start: 'sim', stop: 'sim', status: 'sim' } });
    if (!cfg.success) fail(file, cfg.error, ['sites', name]);
    for (const t of cfg.data.machineTypes)
      if (!s.machineTypes[t]) throw coordinatorErrors.badScenario(file, `sites.${name}.machine-types`, `unknown machine type "${t}"`);
    for (const loc of [simParsed.data.at, ...Object.keys(cfg.data.links)])
      if (loc !== undefined && !s.storage[loc]) throw coordinatorErrors.badScenario(file, `sites.${name}`, `unknown storage location "${loc}"`);
    sites.push({ name, config: cfg.data, ...simParsed.data });
  }
  if (sites.length === 0) throw coordinatorErrors.badScenario(file, 'sites', 'give at least one site');
  // Home reading its own storage over the WAN because of a typo would be said nowhere.
  for (const [key, loc] of [['home.at', s.home.at], ['home-location', s.homeLocation]] as const)
    if (loc !== undefined && !s.storage[loc]) throw coordinatorErrors.badScenario(file, key, `unknown storage location "${loc}"`);
  const tracePath = resolve(dirname(file), s.trace);
  let traceText: string;
  try {
    traceText = readTrace(tracePath);
  } catch (err) {
    throw coordinatorErrors.badScenario(file, 'trace', `cannot read ${tracePath}: ${(err as Error).message}`);
  }
  return {
    name: s.name,
    description: s.description,
    file,
    trace: parseTrace(traceText, tracePath),
    home: s.home,
    ...(s.homeLocation ? { homeLocation: s.homeLocation } : {}),
    intervalMs: s.interval,
    idleTimeMs: s.idleTime,
    bootTimeoutMs: s.bootTimeout,
    maxTimeMs: s.maxTime,
    machineTypes: s.machineTypes,
    storage: s.storage,
    sites,
    ...(s.controller ? { controller: s.controller } : {}),
  };
}

export function loadScenario(path: string): Scenario {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw coordinatorErrors.badScenario(path, '(file)', (err as Error).message);
  }
  return parseScenario(text, path);
}
