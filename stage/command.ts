// `estuary stage in|out|sync SRC DST`: bulk copies between a local directory (or a mounted site
// filesystem) and an S3 bucket prefix, directly or through a gateway's S3 endpoint. Resumable,
// verified, never a half-written file at the destination; see docs/STAGING.md.

import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { rmdir, stat } from 'node:fs/promises';
import type { DirLock } from '../lib/dir-lock.ts';
import { defineCommand } from '../lib/command.ts';
import { isPlainHttpAnswer, notTlsError } from '../lib/tls-mismatch.ts';
import { option, optional } from '../lib/config/options.ts';
import { bool, duration, int, size, str, url } from '../lib/config/values.ts';
import { Destination } from './dest.ts';
import { stageIn } from './download.ts';
import { EXIT, stageErrors } from './errors.ts';
import { describeCollisions } from './keys.ts';
import { Journal } from './local.ts';
import { lockDestination } from './lock.ts';
import { bufferCollector } from './memory.ts';
import { parseS3Url } from './plan.ts';
import { interruptedLine, printable, Progress, renderSummary } from './progress.ts';
import { Store } from './s3.ts';
import { type Signals, watchSignals } from './signals.ts';
import { stageOut, type Summary, type TransferOptions } from './transfer.ts';

const MiB = 2 ** 20;

export const stageOptions = {
  endpoint: optional(url(), 'S3 endpoint: a gateway (http://gateway:3128) or a store; AWS when unset'),
  region: option(str('REGION'), 'us-east-1', 'S3 region used for signing'),
  credentials: optional(str('FILE'), 'credential JSON from estuary gateway credentials issue; else AWS_* variables or AWS_PROFILE'),
  parallel: option(int(1, 256), 8, 'files copied at once'),
  partSize: option(size(5 * MiB, 5 * 2 ** 30), 16 * MiB, 'multipart part size; files up to this size go in one PUT'),
  partParallel: option(int(1, 64), 4, 'parts of one file uploaded at once'),
  stateDir: option(str('DIR'), '~/.cache/estuary/stage', 'where interrupted transfers remember their finished parts'),
  timeout: option(duration(1000, 3_600_000), 30_000, 'a response or object body that sends nothing for this long is cut and retried (a body 3 times, resuming), then the file fails'),
  maxObjects: option(int(1, 1_000_000_000), 1_000_000, 'most objects a listing may hold; a longer one stops the copy (exit 2)'),
  followDestSymlinks: option(bool(), false, 'stage in: follow symlinks inside the destination directory (refused by default: they could lead outside it)'),
  followSourceSymlinks: option(bool(), false, 'stage out: follow symlinks in the source that lead outside it (listed as failed by default: a link planted there would publish what it points to)'),
  json: option(bool(), false, 'the closing summary as one JSON line on stdout also on a terminal (it always is when stdout is not one)'),
};

export const command = defineCommand({
  name: 'stage',
  summary: 'copy a directory to or from an S3 prefix: resumable, verified, skips what is already there',
  description:
    'in: s3://BUCKET/PREFIX → DIR; out: DIR → s3://BUCKET/PREFIX; sync: either, by which side is s3://. ' +
    'Copies only files missing or different at the destination (size and SHA-256, recorded as ' +
    'x-amz-meta-sha256 on upload); identical files are skipped; deletes nothing. Killed or cut off, the ' +
    'same command resumes without sending finished parts again. Downloads land as NAME.HASH.estuary-partial ' +
    'and are renamed once verified; nothing is written outside DIR or through a symlink in it, and keys ' +
    'that map to one local path (d//f and d/f; F and f on a case-insensitive disk) are refused. ' +
    'Ctrl-C or SIGTERM: no new file starts, in-flight work is saved, then one line says what is done. ' +
    'One stage in per destination (a second one stops: ESTUARY_STAGE_LOCKED). stage out follows no symlink that ' +
    'leads outside the source unless --follow-source-symlinks. ' +
    'Exit status: 0 all copied or skipped, 1 some files failed or were refused (listed), 2 bad arguments, destination in use, store ' +
    'unreachable, no objects under the prefix or more than --max-objects, 130 stopped by SIGINT, 143 by SIGTERM.',
  positionals: [
    { name: 'in|out|sync', describe: 'direction' },
    { name: 'SRC', describe: 'source: a directory or s3://bucket/prefix' },
    { name: 'DST', describe: 'destination: s3://bucket/prefix or a directory' },
  ],
  examples: [
    { cmd: 'estuary stage out ./run42 s3://kek-data/run42/ --endpoint http://gateway:3128 --credentials cred.json', what: 'upload results through a gateway' },
    { cmd: 'estuary stage in s3://kek-data/run42/ /scratch/run42', what: 'fetch inputs to local disk (AWS_* keys)' },
  ],
  options: stageOptions,
  async run({ config, args, log }) {
    const [, src, dst] = args as [string, string, string];
    const { direction, remote, localDir } = await sides(args);
    const existed = await stat(localDir).then(() => true, () => false);
    const dest = direction === 'in' ? await openDestination(localDir, config.followDestSymlinks) : undefined;
    // A directory this run created is removed again when the run fails before copying (rmdir
    // removes only an empty one): a mistyped prefix or a bad credential file leaves nothing behind.
    const undo = async () => {
      if (dest && !existed) await rmdir(localDir).catch(() => undefined);
    };
    let lock: DirLock | undefined;
    let store: Store;
    try {
      lock = dest ? await lockDestination(dest.root, stateDirOf(config.stateDir), (why) => log.warn({ destination: dest.root, err: why }, 'cannot lock the destination; make sure no other stage writes to it')) : undefined;
      store = new Store({ endpoint: config.endpoint, region: config.region, credentialsFile: config.credentials, timeoutMs: config.timeout }, remote.bucket);
    } catch (err) {
      lock?.release();
      await undo();
      throw err;
    }
    const stateDir = stateDirOf(config.stateDir);
    const journal = new Journal(stateDir, src, dst);
    await journal.load();
    const progress = new Progress(process.stderr, log);
    const signals = watchSignals(config.shutdownTimeout, (first) => {
      process.stderr.write(`\n${first} again: stopping now; run the same command to resume\n`);
    });
    const opts = transferOptions(config, signals, progress);
    let summary: Summary;
    try {
      summary = dest ? await stageIn(store, remote.prefix, dest, journal, opts) : await stageOut(localDir, store, remote.prefix, journal, opts);
    } catch (err) {
      lock?.release();
      await undo();
      if ((err as { code?: string }).code?.startsWith('ESTUARY_STAGE_')) throw err;
      if (isPlainHttpAnswer(err) && config.endpoint) throw notTlsError('--endpoint', config.endpoint);
      throw stageErrors.store(`listing s3://${remote.bucket}/${remote.prefix}`, describeStoreError(err, config.timeout));
    } finally {
      progress.stop();
      signals.dispose();
      store.destroy();
      lock?.release();
    }
    if (direction === 'out' && summary.listed.files === 0 && summary.failed.length === 0) throw stageErrors.emptySource(localDir);
    const seconds = progress.seconds;
    const human = process.stdout.isTTY === true && !config.json;
    process.stdout.write(human ? renderSummary(summary, seconds) : `${JSON.stringify({ direction, source: src, destination: dst, ...summary, seconds })}\n`);
    if (signals.received) throw stageErrors.interrupted(interruptedLine(summary), signals.received);
    if (summary.collisions.length > 0) throw stageErrors.collisions(printable(describeCollisions(summary.collisions)));
    return summary.failed.length + summary.failedMore > 0 ? EXIT.someFailed : EXIT.ok;
  },
});

type Config = Parameters<(typeof command)['run']>[0]['config'];

/** Which side is the store and which the local directory; refuses anything else. */
async function sides(args: readonly string[]): Promise<{ direction: 'in' | 'out'; remote: { bucket: string; prefix: string }; localDir: string }> {
  const [verb, src, dst] = args as [string, string, string];
  const srcS3 = parseS3Url(src);
  const dstS3 = parseS3Url(dst);
  const direction = verb === 'sync' ? (srcS3 ? 'in' : 'out') : verb;
  if (direction !== 'in' && direction !== 'out') throw stageErrors.arguments(`unknown direction ${verb}; use in, out or sync`);
  const remote = direction === 'in' ? srcS3 : dstS3;
  const localDir = resolve(direction === 'in' ? dst : src);
  if (!remote) throw stageErrors.arguments(`${direction === 'in' ? src : dst} is not s3://BUCKET/PREFIX (a bucket name is 3 to 63 lower-case letters, digits, dots and hyphens)`);
  if ((direction === 'in' ? dstS3 : srcS3) !== undefined) throw stageErrors.arguments('one side must be a local directory');
  if (direction === 'out') {
    const st = await stat(localDir).catch((err: NodeJS.ErrnoException) => {
      throw stageErrors.source(localDir, err.code ?? String(err));
    });
    if (!st.isDirectory()) throw stageErrors.source(localDir, 'not a directory');
  }
  return { direction, remote, localDir };
}

function transferOptions(config: Config, signals: Signals, progress: Progress): TransferOptions & { timeoutMs: number } {
  const collect = bufferCollector();
  return {
    parallel: config.parallel,
    partSize: config.partSize,
    partParallel: config.partParallel,
    maxObjects: config.maxObjects,
    followSourceSymlinks: config.followSourceSymlinks,
    timeoutMs: config.timeout,
    stop: signals.stop,
    cut: signals.cut,
    onBytes: (n: number) => {
      progress.bytes(n);
      collect(n);
    },
    onListed: (files, bytes, complete) => progress.listed(files, bytes, complete),
    onFile: (rel, outcome, bytes, detail) => progress.file(rel, outcome, bytes, detail),
    onResume: (rel, what, bytes) => progress.resumed(rel, what, bytes),
  };
}

async function openDestination(dir: string, follow: boolean): Promise<Destination> {
  return Destination.open(dir, follow).catch((err: NodeJS.ErrnoException) => {
    throw stageErrors.destination(dir, err.code ?? String(err));
  });
}

/** The SDK's words for a store that does not answer, in ours. */
function describeStoreError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; $metadata?: { attempts?: number } };
  const attempts = e.$metadata?.attempts ? ` (${e.$metadata.attempts} attempts)` : '';
  if (e.name === 'TimeoutError') return `no answer for ${timeoutMs / 1000} s${attempts}`;
  return `${e.message ?? String(err)}${attempts}`;
}

/** --state-dir with `~/` expanded. */
function stateDirOf(dir: string): string {
  return dir.startsWith('~/') ? join(homedir(), dir.slice(2)) : dir;
}
