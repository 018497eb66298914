// `estuary stage in|out|sync SRC DST`: bulk copies between a local directory (or a mounted site
// filesystem) and an S3 bucket prefix, directly or through a gateway's S3 endpoint. Resumable,
// verified, never a half-written file at the destination; see docs/STAGING.md.

import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import { defineCommand } from '../lib/command.ts';
import { option, optional } from '../lib/config/options.ts';
import { int, size, str, url } from '../lib/config/values.ts';
import { stageErrors } from './errors.ts';
import { Journal } from './local.ts';
import { bufferCollector } from './memory.ts';
import { parseS3Url } from './plan.ts';
import { Progress } from './progress.ts';
import { Store } from './s3.ts';
import { stageIn, stageOut, type Summary } from './transfer.ts';

const MiB = 2 ** 20;

export const stageOptions = {
  endpoint: optional(url(), 'S3 endpoint: a gateway (http://gateway:3128) or a store; AWS when unset'),
  region: option(str('REGION'), 'us-east-1', 'S3 region used for signing'),
  credentials: optional(str('FILE'), 'credential JSON from estuary gateway credentials issue; else AWS_* variables or AWS_PROFILE'),
  parallel: option(int(1, 256), 8, 'files copied at once'),
  partSize: option(size(5 * MiB, 5 * 2 ** 30), 16 * MiB, 'multipart part size; files up to this size go in one PUT'),
  partParallel: option(int(1, 64), 4, 'parts of one file uploaded at once'),
  stateDir: option(str('DIR'), '~/.cache/estuary/stage', 'where interrupted transfers remember their finished parts'),
};

/** Exit statuses a job script can branch on. */
export const EXIT = { ok: 0, someFailed: 1, badInput: 2 } as const;

export const command = defineCommand({
  name: 'stage',
  summary: 'copy a directory to or from an S3 prefix: resumable, verified, skips what is already there',
  description:
    'in: s3://BUCKET/PREFIX → DIR; out: DIR → s3://BUCKET/PREFIX; sync: either, by which side is s3://. ' +
    'Copies only files missing or different at the destination (size and SHA-256, recorded as ' +
    'x-amz-meta-sha256 on upload), deletes nothing. Killed or cut off, the same command resumes without ' +
    'sending finished parts again. Downloads land as NAME.estuary-partial and are renamed once verified. ' +
    'Exit status: 0 all copied or identical, 1 some files failed (listed), 2 bad arguments or store unreachable.',
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
    const stateDir = config.stateDir.startsWith('~/') ? join(homedir(), config.stateDir.slice(2)) : config.stateDir;
    const journal = new Journal(stateDir, src, dst);
    await journal.load();
    const store = new Store({ endpoint: config.endpoint, region: config.region, credentialsFile: config.credentials }, remote.bucket);
    const progress = new Progress(process.stderr, log);
    const collect = bufferCollector();
    const opts = {
      parallel: config.parallel,
      partSize: config.partSize,
      partParallel: config.partParallel,
      onBytes: (n: number) => {
        progress.bytes(n);
        collect(n);
      },
      onFile: (rel: string, outcome: 'copied' | 'skipped' | 'failed', detail?: string) => progress.file(rel, outcome, detail),
    };
    let summary: Summary;
    try {
      summary =
        direction === 'out'
          ? await stageOut(localDir, store, remote.prefix, journal, opts)
          : await stageIn(store, remote.prefix, localDir, journal, opts);
    } catch (err) {
      throw stageErrors.store(`listing s3://${remote.bucket}/${remote.prefix}`, (err as Error).message ?? String(err));
    } finally {
      progress.stop();
      store.destroy();
    }
    process.stdout.write(`${JSON.stringify({ direction, source: src, destination: dst, ...summary, seconds: progress.seconds })}\n`);
    return summary.failed.length > 0 ? EXIT.someFailed : EXIT.ok;
  },
});
