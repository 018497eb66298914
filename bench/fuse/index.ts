// `estuary bench fuse`: the KEK paper's cp measurements (Table 1, Figures 3–4) and goofys's
// metadata suite, for every S3 filesystem found here, with the SDK alone as a reference.
//
// Order of work: probe the peers, start the backend (behind the emulated link when asked), write
// the datasets once with their checksums, then for each run, each dataset and each peer in turn
// (bench/interleave.ts): drop the caches, mount, `cp` up and unmount (the up time ends when the
// data is in S3), drop the caches, mount again, `cp` down, unmount, verify every checksum, delete
// the objects. A peer that fails is marked failed with the reason and left out of the rest; the
// others go on.
//
// The SDK alone is a reference, not a limit: it moves the same files with parallel multipart
// uploads and ranged GETs, one dataset's files sharing one pool of requests. A mount that
// overlaps uploads across files can beat it on some rows, and that is a finding, not an error.

import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openBackend } from '../backends/index.ts';
import { installGoofys, installMissing } from '../install.ts';
import { oneRound } from '../interleave.ts';
import { LOCAL, type NetworkProfile } from '../network-profile.ts';
import { deletePrefix, ensureBucket, s3Client, PART_BYTES, CONCURRENCY } from '../s3.ts';
import type { BenchContext, Scenario, ScenarioResult } from '../scenario.ts';
import {
  fuseDiskEstimate,
  FUSE_CASES,
  PAPER_DATASETS,
  PAPER_METADATA,
  QUICK_DATASETS,
  QUICK_METADATA,
  selectCases,
  type FuseCase,
  type MetadataSizes,
} from './datasets.ts';
import { copyWithMount, copyWithSdk, withMount } from './copies.ts';
import { dropCaches, makeDataset, type LocalDataset } from './files.ts';
import { metadataCases, runMetadataSuite, seedMetadata, type MetadataFixture } from './metadata.ts';
import { BASELINE_PEER, fuseMethod, REFERENCE_PEER } from './method.ts';
import { MOUNT_PEERS, type MountPeer } from './mounts.ts';
import { Run, type FuseSettings } from './run.ts';

export { BASELINE_PEER, REFERENCE_PEER } from './method.ts';
const DEFAULT_RUNS = 3;

/** The fuse cases `--cases` names; none (only other scenarios' cases) means all of them. */
function fuseCasesOf(cases: unknown): FuseCase[] | undefined {
  if (!Array.isArray(cases)) return undefined;
  const mine = cases.filter((c): c is FuseCase => (FUSE_CASES as readonly string[]).includes(String(c)));
  return mine.length > 0 ? mine : undefined;
}

function settingsOf(ctx: Pick<BenchContext, 'quick' | 'settings'>): FuseSettings {
  const s = ctx.settings;
  const picked = selectCases(
    ctx.quick ? QUICK_DATASETS : PAPER_DATASETS,
    fuseCasesOf(s.cases),
  );
  return {
    network: (s.network as NetworkProfile | undefined) ?? LOCAL,
    backend: s.backend === 'swift' ? 'swift' : 's3rver',
    endpoint: typeof s.endpoint === 'string' ? s.endpoint : undefined,
    bucket: typeof s.bucket === 'string' ? s.bucket : 'estuary-bench',
    runs: typeof s.runs === 'number' ? s.runs : ctx.quick ? 1 : DEFAULT_RUNS,
    datasets: picked.datasets,
    metadata: picked.metadata ? (ctx.quick ? QUICK_METADATA : PAPER_METADATA) : undefined,
    peers: Array.isArray(s.peers) ? (s.peers as string[]) : undefined,
  };
}

/** Bytes of local disk this scenario needs at its peak, for the runner's check before starting. */
export function estimateBytes(ctx: Pick<BenchContext, 'quick' | 'settings'>): number {
  const s = settingsOf(ctx);
  return fuseDiskEstimate(s.datasets, s.metadata, s.endpoint === undefined);
}

interface MetadataSuite {
  readonly sizes: MetadataSizes;
  readonly fixture: MetadataFixture;
}

async function metadataRound(run: Run, peer: MountPeer, suite: MetadataSuite, r: number): Promise<void> {
  run.progress(`${peer.name}: metadata suite, run ${r}/${run.s.runs}`);
  const { sizes, fixture } = suite;
  const cases = metadataCases(sizes);
  const scratch = `${peer.name}-meta-r${r}`;
  await dropCaches();
  try {
    await withMount(run, peer, () =>
      runMetadataSuite(run.mnt, scratch, sizes, fixture, (step, seconds) =>
        run.book.add({
          case: cases[step]!,
          peer: peer.name,
          metric: 'duration',
          value: seconds,
        }),
      ),
    );
  } finally {
    await deletePrefix(run.s3, run.s.bucket, `${scratch}`);
  }
}

/** What a skipped peer's reason adds: how to get it, or why --install-peers cannot. */
const INSTALL_HINTS: Readonly<Record<string, string>> = {
  s3fs: '; --install-peers installs it from Debian',
  rclone: '; --install-peers installs it from Debian',
  goofys: '; --install-peers builds it from the Go module proxy',
  geesefs:
    '; not installable from the registries: its S3 SDK fork (s3ext/) is a nested module that module zips leave out, and with the upstream SDK the build fails (undefined: s3.ListObjectsV1ExtInput)',
  'mountpoint-s3':
    '; not installable from the registries: crates.io has its libraries, but its command line (the mountpoint-s3 crate: cli.rs, run.rs) is not published',
};

async function probeAll(run: Run, wanted?: readonly string[]): Promise<MountPeer[]> {
  const want = (name: string) => !wanted || wanted.includes(name);
  if (run.ctx.installPeers) {
    const debian = [
      { command: 's3fs', pkg: 's3fs' },
      { command: 'rclone', pkg: 'rclone' },
    ].filter((p) => want(p.command));
    run.notes.push(...(await installMissing(debian, run.ctx.log)));
    if (want('goofys')) run.notes.push(...(await installGoofys(run.ctx.log)));
  }
  const usable: MountPeer[] = [];
  for (const peer of MOUNT_PEERS) {
    if (!want(peer.name) || (peer.onRequest && !wanted?.includes(peer.name))) continue;
    const p = await peer.probe();
    const hint = INSTALL_HINTS[peer.name] ?? '';
    run.statuses.set(
      peer.name,
      p.available
        ? { peer: peer.name, status: 'ok', version: p.version }
        : { peer: peer.name, status: 'skipped', reason: `${p.reason}${hint}` },
    );
    if (p.available) usable.push(peer);
  }
  run.statuses.set(REFERENCE_PEER, {
    peer: REFERENCE_PEER,
    status: 'ok',
    version: `@aws-sdk/client-s3, ${CONCURRENCY} requests in flight, ${PART_BYTES / 2 ** 20} MiB parts`,
  });
  return usable;
}

async function prepare(run: Run): Promise<{ locals: LocalDataset[]; suite?: MetadataSuite }> {
  await mkdir(run.down, { recursive: true });
  const src = join(run.ctx.workDir, 'src');
  const locals: LocalDataset[] = [];
  for (const d of run.s.datasets) {
    run.ctx.progress(`writing dataset ${d.label}`);
    locals.push(await makeDataset(src, d));
  }
  const sizes = run.s.metadata;
  if (!sizes) return { locals };
  const big = await makeDataset(join(run.ctx.workDir, 'meta-src'), {
    label: 'ttfb',
    files: 1,
    fileBytes: sizes.firstByteFileBytes,
  });
  const path = join(big.dir, big.files[0]!.name);
  const firstByte = (await readFile(path)).subarray(0, 1)[0]!;
  run.ctx.progress('seeding metadata objects');
  const fixture = await seedMetadata(run.s3, run.s.bucket, sizes, {
    path,
    bytes: big.files[0]!.bytes,
    firstByte,
  });
  return { locals, suite: { sizes, fixture } };
}

async function measure(run: Run, peers: MountPeer[]): Promise<void> {
  const { locals, suite } = await prepare(run);
  run.totalSteps = run.s.runs * (locals.length * (peers.length + 1) * 2 + (suite ? peers.length : 0));
  // The SDK takes its turn after the mounts, as one more peer of every copy.
  const copiers: Copier[] = [...peers, { name: REFERENCE_PEER }];
  const turns = { signal: run.ctx.signal, skip: (p: { name: string }) => !run.alive(p.name) };
  for (let r = 1; r <= run.s.runs; r++) {
    // Run r of every dataset for every peer, then run r of the metadata suite for every mount:
    // within a case, each peer's run r comes after every other peer's run r − 1.
    for (const local of locals)
      await oneRound(
        copiers,
        (c) =>
          ('mount' in c ? copyWithMount(run, c, local, r) : copyWithSdk(run, local, r)).catch((err) =>
            run.fail(c.name, `cp ${local.dataset.label}`, err),
          ),
        turns,
      );
    if (suite)
      await oneRound(
        peers,
        (peer) => metadataRound(run, peer, suite, r).catch((err) => run.fail(peer.name, 'metadata suite', err)),
        turns,
      );
  }
}

/** A mount, or the SDK alone (which has no mount). */
type Copier = MountPeer | { readonly name: string };

export const fuseScenario: Scenario = async (ctx) => {
  const s = settingsOf(ctx);
  const notes: string[] = [];
  const backend = await openBackend({
    backend: s.backend,
    endpoint: s.endpoint,
    network: s.network,
    workDir: ctx.workDir,
    log: ctx.log,
    notes,
  });
  const run = new Run(ctx, s, backend, s3Client(backend));
  run.notes.push(...notes);
  try {
    const peers = await probeAll(run, s.peers);
    await ensureBucket(run.s3, s.bucket);
    run.cachesDropped = await dropCaches();
    if (!run.cachesDropped)
      run.notes.push('could not drop the page cache (needs root): "down" copies may be served from memory');
    await measure(run, peers);
    if (ctx.signal.aborted)
      run.notes.push('interrupted: the results hold what was measured before the signal');
  } finally {
    run.s3.destroy();
    await backend.stop();
  }
  return result(run);
};

function result(run: Run): ScenarioResult {
  const s = run.s;
  return {
    scenario: 'fuse',
    settings: {
      runs: s.runs,
      datasets: s.datasets.map((d) => ({ label: d.label, files: d.files, fileBytes: d.fileBytes })),
      metadata: s.metadata,
      network: s.network,
      link: run.backend.network,
      backend: run.backend.kind,
      backendVersion: run.backend.version,
      bucket: s.bucket,
    },
    peers: [...run.statuses.values()],
    measurements: run.book.measurements(),
    baseline: BASELINE_PEER,
    reference: REFERENCE_PEER,
    method: fuseMethod(run.cachesDropped, s.metadata !== undefined),
    notes: run.notes,
  };
}

