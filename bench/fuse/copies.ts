// One copy of a dataset up and down, through a mount or through the SDK alone, and the samples
// it records: rate, CPU per GB and peak memory.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { lastLine } from '../proc.ts';
import { deletePrefix, downloadFiles, listSizes, uploadFiles } from '../s3.ts';
import { mbPerSecond } from '../stats.ts';
import { datasetBytes } from './datasets.ts';
import { dropCaches, removeDir, timedCopy, verifyCopy, type LocalDataset } from './files.ts';
import { REFERENCE_PEER } from './method.ts';
import type { Mounted, MountPeer } from './mounts.ts';
import { slug, type Run } from './run.ts';
import type { ProcessUsage } from './usage.ts';

export async function withMount<T>(
  run: Run,
  peer: MountPeer,
  body: (m: Mounted) => Promise<T>,
): Promise<{ value: T; unmountSeconds: number; usage: ProcessUsage | undefined }> {
  const m = await run.mount(peer);
  let value: T;
  try {
    value = await body(m);
  } catch (err) {
    // The peer's own last line usually says more than the errno cp saw ("Input/output error").
    const said = lastLine(m.output());
    await m.unmount().catch(() => undefined);
    throw new Error(`${(err as Error).message}${said ? ` (${peer.name} said: ${said})` : ''}`, { cause: err });
  }
  const t0 = performance.now();
  await m.unmount();
  return { value, unmountSeconds: (performance.now() - t0) / 1000, usage: m.usage() };
}

async function checkUploaded(run: Run, prefix: string, local: LocalDataset): Promise<void> {
  const sizes = await listSizes(run.s3, run.s.bucket, `${prefix}/`);
  const missing = local.files.filter((f) => sizes.get(`${prefix}/${f.name}`) !== f.bytes);
  if (missing.length > 0)
    throw new Error(
      `${missing.length} of ${local.files.length} objects missing or short in S3 after unmount`,
    );
}

export async function copyWithMount(run: Run, peer: MountPeer, local: LocalDataset, r: number): Promise<void> {
  const prefix = `${peer.name}-r${r}-${slug(local.dataset)}`;
  const bytes = datasetBytes(local.dataset);
  const what = `${local.dataset.label}, run ${r}/${run.s.runs}`;
  run.progress(`${peer.name}: cp up ${what}`);
  await dropCaches();
  const up = await withMount(run, peer, () => timedCopy(local.dir, join(run.mnt, prefix), run.ctx.signal));
  await checkUploaded(run, prefix, local);
  addRate(run, 'up', local, peer.name, mbPerSecond(bytes, up.value + up.unmountSeconds));
  addUsage(run, 'up', local, peer.name, up.usage);
  run.progress(`${peer.name}: cp down ${what}`);
  await dropCaches();
  const dest = join(run.down, prefix);
  const down = await withMount(run, peer, () => timedCopy(join(run.mnt, prefix), dest, run.ctx.signal));
  await verifyAndClean(run, dest, local, prefix);
  addRate(run, 'down', local, peer.name, mbPerSecond(bytes, down.value));
  addUsage(run, 'down', local, peer.name, down.usage);
}

/** Checks a download against the dataset, then removes it here and in the bucket. */
async function verifyAndClean(run: Run, dest: string, local: LocalDataset, prefix: string): Promise<void> {
  const problem = await verifyCopy(dest, local.files);
  await removeDir(dest);
  await deletePrefix(run.s3, run.s.bucket, `${prefix}/`);
  if (problem) throw new Error(problem);
}

function addRate(run: Run, direction: 'up' | 'down', local: LocalDataset, peer: string, value: number): void {
  run.book.add({ case: `cp ${direction} ${local.dataset.label}`, peer, metric: 'transferRate', value });
}

/** What the mount process cost for one copy: CPU seconds per GB moved, and its peak memory. */
function addUsage(
  run: Run,
  direction: 'up' | 'down',
  local: LocalDataset,
  peer: string,
  usage: ProcessUsage | undefined,
): void {
  if (!usage) return;
  const gb = datasetBytes(local.dataset) / 1e9;
  const label = local.dataset.label;
  run.book.add({
    case: `cpu ${direction} ${label}`,
    peer,
    metric: 'cpuPerGB',
    value: usage.cpuSeconds / gb,
  });
  run.book.add({
    case: `rss ${direction} ${label}`,
    peer,
    metric: 'peakMemory',
    value: usage.peakRssBytes / 1e6,
  });
}

export async function copyWithSdk(run: Run, local: LocalDataset, r: number): Promise<void> {
  const prefix = `${REFERENCE_PEER}-r${r}-${slug(local.dataset)}`;
  const bytes = datasetBytes(local.dataset);
  const what = `${local.dataset.label}, run ${r}/${run.s.runs}`;
  const transfers = (dir: string) =>
    local.files.map((f) => ({ path: join(dir, f.name), key: `${prefix}/${f.name}`, bytes: f.bytes }));
  run.progress(`${REFERENCE_PEER}: up ${what}`);
  await dropCaches();
  let t0 = performance.now();
  let cpu0 = process.cpuUsage();
  await uploadFiles(run.s3, run.s.bucket, transfers(local.dir));
  addRate(run, 'up', local, REFERENCE_PEER, mbPerSecond(bytes, (performance.now() - t0) / 1000));
  addSdkCpu(run, 'up', local, cpu0);
  run.progress(`${REFERENCE_PEER}: down ${what}`);
  await dropCaches();
  const dest = join(run.down, prefix);
  await mkdir(dest, { recursive: true });
  t0 = performance.now();
  cpu0 = process.cpuUsage();
  await downloadFiles(run.s3, run.s.bucket, transfers(dest));
  const seconds = (performance.now() - t0) / 1000;
  addSdkCpu(run, 'down', local, cpu0);
  await verifyAndClean(run, dest, local, prefix);
  addRate(run, 'down', local, REFERENCE_PEER, mbPerSecond(bytes, seconds));
}

/**
 * The CPU the SDK alone spent on one copy, in this process (the link's relay runs in another):
 * Node's HTTP stack and the SDK with no filesystem, the floor under a mount written in Node. It
 * includes reading or writing the local files, which for a mount is `cp`'s work, not the mount's.
 */
function addSdkCpu(run: Run, direction: 'up' | 'down', local: LocalDataset, since: NodeJS.CpuUsage): void {
  const used = process.cpuUsage(since);
  run.book.add({
    case: `cpu ${direction} ${local.dataset.label}`,
    peer: REFERENCE_PEER,
    metric: 'cpuPerGB',
    value: (used.user + used.system) / 1e6 / (datasetBytes(local.dataset) / 1e9),
  });
}

/** The metadata suite's sizes with the objects seeded for it; absent when --cases leaves it out. */
