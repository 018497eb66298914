// `estuary bench staging`: data staging between a site and the cloud, over the emulated link.
//
// (a) Cloud workers reading one dataset from a bucket at the site: directly (every worker pulls
//     every byte across the link), through a cold gateway next to the workers (the first reader
//     pulls, the others join its fetch), and through the same gateway warm (nothing crosses). Link
//     traffic is counted as body bytes: what the workers read directly, or what the gateway
//     fetched from the store (its estuary_gateway_bytes_received_total).
// (b) Bulk copies of the KEK datasets in both directions with `estuary stage`, `rclone copy` and
//     `aws s3 cp --recursive`, each tool its own process so its peak memory is its own.
//
// The store runs behind the link (bench/backends); the workers, the gateway and the tools run on
// this side. Every repetition visits every peer in the same order (bench/interleave.ts).

import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Backend } from '../backends/backend.ts';
import { openBackend } from '../backends/index.ts';
import { type Dataset, PAPER_DATASETS } from '../fuse/datasets.ts';
import { makeDataset, removeDir, verifyCopy } from '../fuse/files.ts';
import { sampleUsage } from '../fuse/usage.ts';
import { installMissing } from '../install.ts';
import { oneRound } from '../interleave.ts';
import { LOCAL, type NetworkProfile } from '../network-profile.ts';
import { lastLine, runCommand, startProcess } from '../proc.ts';
import { deletePrefix, ensureBucket, listSizes, readAll, s3Client, uploadFiles } from '../s3.ts';
import { SampleBook } from '../samples.ts';
import type { BenchContext, PeerStatus, Scenario } from '../scenario.ts';
import { mbPerSecond } from '../stats.ts';
import { COPY_TOOLS, type CopyTool, FLOORS, type Floor } from './tools.ts';

const REPO_ROOT = new URL('../../', import.meta.url).pathname;
const MB = 1e6;

interface StagingSettings {
  readonly network: NetworkProfile;
  readonly backend: 's3rver' | 'swift';
  readonly bucket: string;
  readonly runs: number;
  readonly workers: number;
  readonly readDataset: Dataset;
  readonly copyDatasets: readonly Dataset[];
}

function settingsOf(ctx: Pick<BenchContext, 'quick' | 'settings'>): StagingSettings {
  const s = ctx.settings;
  const num = (k: string, d: number) => (typeof s[k] === 'number' ? (s[k] as number) : d);
  return {
    network: (s.network as NetworkProfile | undefined) ?? LOCAL,
    backend: s.backend === 'swift' ? 'swift' : 's3rver',
    bucket: typeof s.bucket === 'string' ? s.bucket : 'estuary-bench-staging',
    runs: num('runs', ctx.quick ? 1 : 3),
    workers: num('workers', ctx.quick ? 3 : 20),
    // The dataset: 2 GB read by 20 workers; --quick keeps the shape at a hundredth.
    readDataset: ctx.quick ? { label: '8×2.5MB', files: 8, fileBytes: 2.5 * MB } : { label: '16×125MB', files: 16, fileBytes: 125 * MB },
    copyDatasets: ctx.quick ? [{ label: '10×1MB', files: 10, fileBytes: MB }] : PAPER_DATASETS,
  };
}

export async function estimateBytes(ctx: Pick<BenchContext, 'quick' | 'settings'>): Promise<number> {
  const s = settingsOf(ctx);
  const copy = Math.max(...s.copyDatasets.map((d) => d.files * d.fileBytes));
  // The read dataset in the store and the gateway's cache; a copied dataset local, stored, fetched back.
  return 2 * s.readDataset.files * s.readDataset.fileBytes + 3 * copy;
}

/** The gateway's counter of body bytes received from its upstreams (here: the store). */
async function bytesReceived(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^estuary_gateway_bytes_received_total (\S+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

interface Gateway {
  readonly url: string;
  readonly creds: { accessKeyId: string; secretAccessKey: string; sessionToken: string };
  stop(): Promise<void>;
}

/** A fresh gateway (empty cache) serving the bucket from the store, and a credential for it. */
async function startGateway(dir: string, b: Backend, bucket: string): Promise<Gateway> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'issuer.key'), randomBytes(32).toString('hex'));
  await writeFile(join(dir, 'keys.json'), JSON.stringify({ default: { accessKeyId: b.accessKeyId, secretAccessKey: b.secretAccessKey, region: b.region } }), { mode: 0o600 });
  const bin = join(REPO_ROOT, 'bin', 'estuary.js');
  const child = startProcess('gateway', process.execPath, [
    bin, 'gateway', '--listen', '127.0.0.1:0', '--log-format', 'json', '--cache-dir', join(dir, 'cache'),
    '--s3', `${bucket}=${b.endpoint}`, '--s3-issuer-key-file', join(dir, 'issuer.key'), '--s3-credentials', join(dir, 'keys.json'),
    '--s3-region', b.region,
  ]);
  const m = await child.waitFor(/"listen":"127\.0\.0\.1:(\d+)"/, 30_000);
  const issued = await runCommand(process.execPath, [bin, 'gateway', 'credentials', 'issue', '--prefix', bucket, '--issuer-key-file', join(dir, 'issuer.key')]);
  if (issued.code !== 0) throw new Error(`credentials issue failed: ${lastLine(issued.output)}`);
  const c = JSON.parse(issued.output) as { AccessKeyId: string; SecretAccessKey: string; SessionToken: string };
  return {
    url: `http://127.0.0.1:${m[1]}`,
    creds: { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken },
    stop: async () => void (await child.stop('SIGTERM', 10_000)),
  };
}

/** The workers read directly, through a fresh gateway (estuary), then through it again, warm. */
type Reader = 'direct' | 'estuary' | 'estuary-warm';

async function workersRead(endpoint: string, b: Backend, creds: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }, s: StagingSettings, keys: readonly string[]): Promise<{ seconds: number; bytes: number }> {
  const clients = Array.from({ length: s.workers }, () => s3Client({ endpoint, region: b.region, ...creds }));
  const t0 = performance.now();
  const read = await Promise.all(clients.map((c) => readAll(c, s.bucket, keys)));
  const seconds = (performance.now() - t0) / 1000;
  for (const c of clients) c.destroy();
  return { seconds, bytes: read.reduce((a, n) => a + n, 0) };
}

async function readCase(ctx: BenchContext, s: StagingSettings, b: Backend, book: SampleBook, notes: string[]): Promise<void> {
  const d = s.readDataset;
  const local = await makeDataset(join(ctx.workDir, 'read'), d);
  const store = s3Client(b);
  const prefix = 'read/';
  await uploadFiles(store, s.bucket, local.files.map((f) => ({ key: `${prefix}${f.name}`, path: join(local.dir, f.name), bytes: f.bytes })));
  store.destroy();
  const keys = local.files.map((f) => `${prefix}${f.name}`);
  const total = d.files * d.fileBytes;
  const label = `${s.workers} workers read ${d.label}`;
  for (let run = 1; run <= s.runs && !ctx.signal.aborted; run++) {
    let gw: Gateway | undefined;
    try {
      await oneRound<Reader>(['direct', 'estuary', 'estuary-warm'], async (peer) => {
        ctx.progress(`${peer}: ${label}, run ${run}/${s.runs}`);
        if (peer === 'estuary') gw = await startGateway(join(ctx.workDir, `gw-${run}`), b, s.bucket);
        const before = gw && peer !== 'direct' ? await bytesReceived(gw.url) : 0;
        const r = peer === 'direct'
          ? await workersRead(b.endpoint, b, b, s, keys)
          : await workersRead(gw!.url, b, gw!.creds, s, keys);
        if (r.bytes !== total * s.workers) throw new Error(`${peer}: workers read ${r.bytes} bytes, expected ${total * s.workers}`);
        const linkBytes = peer === 'direct' ? r.bytes : (await bytesReceived(gw!.url)) - before;
        book.add({ case: label, peer, metric: 'duration', value: r.seconds });
        book.add({ case: `${label}: link traffic`, peer, metric: 'linkTraffic', value: linkBytes / total });
      }, { signal: ctx.signal });
    } catch (err) {
      notes.push(`read case, run ${run}: ${(err as Error).message}`);
    } finally {
      await gw?.stop();
    }
  }
  await removeDir(local.dir);
}

async function copyCase(ctx: BenchContext, s: StagingSettings, b: Backend, book: SampleBook, tools: readonly CopyTool[], failed: Map<string, string>): Promise<void> {
  const store = s3Client(b);
  for (const d of s.copyDatasets) {
    const local = await makeDataset(join(ctx.workDir, 'copy'), d);
    for (let run = 1; run <= s.runs && !ctx.signal.aborted; run++) {
      await oneRound<CopyTool | Floor>([...tools, ...FLOORS], async (tool) => {
        if ('argv' in tool && !('command' in tool)) {
          await floorTurn(tool, b, local.dir, d, book).catch((err: Error) => failed.set(tool.name, err.message));
          return;
        }
        const prefix = `copy/${tool.name}/`;
        const url = `s3://${s.bucket}/${prefix}`;
        const back = join(ctx.workDir, 'back', tool.name);
        const conf = join(ctx.workDir, 'conf', tool.name);
        await mkdir(conf, { recursive: true });
        try {
          await deletePrefix(store, s.bucket, prefix);
          await removeDir(back);
          ctx.progress(`${tool.name}: stage up ${d.label}, run ${run}/${s.runs}`);
          const up = await timedTool(tool, b, local.dir, url, conf);
          const sizes = await listSizes(store, s.bucket, prefix);
          if (sizes.size !== d.files || [...sizes.values()].some((n) => n !== d.fileBytes)) throw new Error(`up: the store holds ${sizes.size} of ${d.files} files`);
          ctx.progress(`${tool.name}: stage down ${d.label}, run ${run}/${s.runs}`);
          const down = await timedTool(tool, b, url, back, conf);
          const bad = await verifyCopy(back, local.files);
          if (bad) throw new Error(`down: ${bad}`);
          const bytes = d.files * d.fileBytes;
          book.add({ case: `up ${d.label}`, peer: tool.name, metric: 'transferRate', value: mbPerSecond(bytes, up.seconds) });
          book.add({ case: `down ${d.label}`, peer: tool.name, metric: 'transferRate', value: mbPerSecond(bytes, down.seconds) });
          book.add({ case: `peak memory ${d.label}`, peer: tool.name, metric: 'peakMemory', value: Math.max(up.peakRss, down.peakRss) / MB });
        } catch (err) {
          failed.set(tool.name, (err as Error).message);
        }
      }, { signal: ctx.signal, skip: (t) => failed.has(t.name) });
    }
    await removeDir(local.dir);
  }
  store.destroy();
}

/** One measurement of a floor: the hash pass's rate on the up row, the idle process's memory on the memory row. */
async function floorTurn(f: Floor, b: Backend, dir: string, d: Dataset, book: SampleBook): Promise<void> {
  const { cmd, args, env } = f.argv(dir, b);
  const t0 = performance.now();
  const child = startProcess(f.name, cmd, args, { env });
  const usage = sampleUsage(child.pid);
  const code = await child.exited;
  const seconds = (performance.now() - t0) / 1000;
  const peakRss = usage.last()?.peakRssBytes ?? 0;
  usage.stop();
  if (code !== 0) throw new Error(`${f.name} exited ${code}: ${lastLine(child.output())}`);
  if (f.name === 'sha256-pass') book.add({ case: `up ${d.label}`, peer: f.name, metric: 'transferRate', value: mbPerSecond(d.files * d.fileBytes, seconds) });
  else book.add({ case: `peak memory ${d.label}`, peer: f.name, metric: 'peakMemory', value: peakRss / MB });
}

async function timedTool(tool: CopyTool, b: Backend, from: string, to: string, conf: string): Promise<{ seconds: number; peakRss: number }> {
  const { cmd, args, env } = await tool.argv(b, from, to, conf);
  const t0 = performance.now();
  const child = startProcess(tool.name, cmd, args, { env });
  const usage = sampleUsage(child.pid);
  const code = await child.exited;
  const seconds = (performance.now() - t0) / 1000;
  const peakRss = usage.last()?.peakRssBytes ?? 0;
  usage.stop();
  if (code !== 0) throw new Error(`${tool.name} exited ${code}: ${lastLine(child.output())}`);
  return { seconds, peakRss };
}

async function withBackend<T>(ctx: BenchContext, s: StagingSettings, notes: string[], body: (b: Backend) => Promise<T>): Promise<T> {
  const backend = await openBackend({ backend: s.backend, network: s.network, workDir: ctx.workDir, log: ctx.log, notes });
  try {
    const s3 = s3Client(backend);
    await ensureBucket(s3, s.bucket);
    s3.destroy();
    return await body(backend);
  } finally {
    await backend.stop();
  }
}

function settingsRecord(s: StagingSettings, b: Backend): Record<string, unknown> {
  return { runs: s.runs, workers: s.workers, readDataset: s.readDataset, copyDatasets: s.copyDatasets, network: s.network, link: b.network, backend: b.kind, bucket: s.bucket };
}

/** (a): cloud workers reading a site bucket, directly or through a gateway next to them. */
export const stagingScenario: Scenario = async (ctx) => {
  const s = settingsOf(ctx);
  const notes: string[] = [];
  const book = new SampleBook(ctx);
  let link: Backend | undefined;
  await withBackend(ctx, s, notes, async (b) => {
    link = b;
    await readCase(ctx, s, b, book, notes);
  });
  return {
    scenario: 'staging',
    settings: settingsRecord(s, link!),
    peers: [
      { peer: 'direct', status: 'ok' },
      { peer: 'estuary', status: 'ok', version: 'gateway with --s3, cold cache' },
      { peer: 'estuary-warm', status: 'ok', version: 'the same gateway, read again' },
    ],
    measurements: book.measurements(),
    baseline: 'direct',
    method: [
      'Every worker reads every object whole with its own SDK client, all workers at once; the time runs from the first request to the last byte. The store is behind the link; workers and gateway are on this side.',
      'Link traffic counts body bytes: those the workers read directly, or those the gateway received from the store (its estuary_gateway_bytes_received_total). estuary starts each run with an empty cache; estuary-warm is the same gateway read again.',
    ],
    notes,
  };
};

/** (b): `estuary stage` against `rclone copy` and `aws s3 cp --recursive`, both directions. */
export const stageScenario: Scenario = async (ctx) => {
  const s = settingsOf(ctx);
  const notes: string[] = [];
  if (ctx.installPeers) {
    notes.push(...(await installMissing(COPY_TOOLS.filter((t) => t.pkg).map((t) => ({ command: t.command, pkg: t.pkg! })), ctx.log)));
  }
  const statuses: PeerStatus[] = [];
  const tools: CopyTool[] = [];
  for (const t of COPY_TOOLS) {
    const version = await t.probe();
    if (version) tools.push(t);
    statuses.push(version ? { peer: t.name, status: 'ok', version } : { peer: t.name, status: 'skipped', reason: `${t.command} not on PATH; --install-peers installs ${t.pkg}` });
  }
  statuses.push(
    { peer: 'sha256-pass', status: 'ok', version: 'the SHA-256 pass over the dataset alone, one process, one reused buffer (its rate on the up rows)' },
    { peer: 'node-sdk-idle', status: 'ok', version: 'Node with the AWS SDK loaded and a client made, nothing moved (on the memory rows)' },
  );
  const book = new SampleBook(ctx);
  const failed = new Map<string, string>();
  let link: Backend | undefined;
  await withBackend(ctx, s, notes, async (b) => {
    link = b;
    await copyCase(ctx, s, b, book, tools, failed);
  });
  for (const [peer, reason] of failed) {
    const i = statuses.findIndex((p) => p.peer === peer);
    statuses[i] = { ...statuses[i]!, status: 'failed', reason };
  }
  return {
    scenario: 'stage',
    settings: settingsRecord(s, link!),
    peers: statuses,
    measurements: book.measurements(),
    baseline: 'rclone',
    method: [
      'Each tool copies the local dataset to an emptied prefix (up), then the prefix to an empty directory (down), as its own process; every object size and every file checksum is verified after each copy.',
      'Peak memory is the VmHWM of the tool process over both copies, sampled every 100 ms.',
      'Floors, measured in the same rounds as the tools: sdk-alone (the AWS SDK moving the same files with no hashing, journal or checks), sha256-pass (the hash pass stage out makes before sending, as a rate on the up rows), node-sdk-idle (the resident memory of Node with the SDK loaded, on the memory rows).',
    ],
    notes,
  };
};
