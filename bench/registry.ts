// The scenarios `estuary bench` offers: fuse always; gateway and discovery once their modules
// exist in this tree (bench/gateway/index.ts exporting gatewayScenario, bench/discovery/index.ts
// exporting discoveryScenario). Each is imported only when it runs.

import { existsSync } from 'node:fs';
import type { BenchContext, Scenario } from './scenario.ts';

export interface ScenarioEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<Scenario>;
  /** Peak local disk the scenario needs, for the check before anything starts. */
  estimateBytes(ctx: Pick<BenchContext, 'quick' | 'settings'>): Promise<number>;
  /** It starts the local S3 server of --backend (unless --endpoint names a real one). */
  readonly localS3?: boolean;
}

interface OptionalModule {
  readonly name: string;
  readonly summary: string;
  readonly file: string;
  readonly exportName: string;
  readonly localS3?: boolean;
}

const OPTIONAL: readonly OptionalModule[] = [
  {
    name: 'gateway',
    summary: "estuary's gateway against Squid, nginx proxy_cache and Varnish",
    file: './gateway/index.ts',
    exportName: 'gatewayScenario',
  },
  {
    name: 'staging',
    summary: 'cloud workers reading a site bucket directly or through a gateway: time and link traffic',
    file: './staging/index.ts',
    exportName: 'stagingScenario',
    localS3: true,
  },
  {
    name: 'stage',
    summary: 'estuary stage against rclone copy and the aws CLI, up and down, speed and memory',
    file: './staging/index.ts',
    exportName: 'stageScenario',
    localS3: true,
  },
  {
    name: 'coordinator',
    summary: 'the coordinator simulated under LSF-RC, COBalD, GlideinWMS and estuary policies on four scenarios',
    file: './coordinator/index.ts',
    exportName: 'coordinatorScenario',
  },
  {
    name: 'discovery',
    summary: 'heartbeat ingestion and nearest-proxy queries at 10,000 caches',
    file: './discovery/index.ts',
    exportName: 'discoveryScenario',
  },
];

const fuse: ScenarioEntry = {
  name: 'fuse',
  summary: 'cp of the KEK datasets and a metadata suite on S3 mounts, against s3fs and rclone, with the SDK alone as a reference',
  load: async () => (await import('./fuse/index.ts')).fuseScenario,
  estimateBytes: async (ctx) => (await import('./fuse/index.ts')).estimateBytes(ctx),
  localS3: true,
};

function optionalEntry(m: OptionalModule): ScenarioEntry {
  const url = new URL(m.file, import.meta.url);
  // A variable specifier: these files may not exist yet, and the type-check must not need them.
  const load = async () => (await import(url.href)) as Record<string, unknown>;
  return {
    name: m.name,
    summary: m.summary,
    localS3: m.localS3 === true,
    async load() {
      const scenario = (await load())[m.exportName];
      if (typeof scenario !== 'function') throw new Error(`${m.file} does not export ${m.exportName}`);
      return scenario as Scenario;
    },
    async estimateBytes(ctx) {
      const estimate = (await load()).estimateBytes;
      return typeof estimate === 'function' ? Number(await estimate(ctx)) : 0;
    },
  };
}

/** The scenarios present in this tree, in the order `all` runs them. */
export function availableScenarios(): ScenarioEntry[] {
  const present = OPTIONAL.filter((m) => existsSync(new URL(m.file, import.meta.url)));
  return [fuse, ...present.map(optionalEntry)];
}
