// `estuary mount BUCKET[/PREFIX] MOUNTPOINT`: checks the bucket, mounts it with FUSE in the
// foreground, logs "mounted", and on SIGINT/SIGTERM (or an outside `fusermount -u`) waits for
// operations in flight — uploads included — before it unmounts and exits.

import { defineCommand } from '../lib/command.ts';
import { option, optional } from '../lib/config/options.ts';
import { bool, duration, int, size, str, url, type ValueType, ValueError } from '../lib/config/values.ts';
import { type EstuaryError, isEstuaryError } from '../lib/errors.ts';
import { runUntilSignalled } from '../lib/lifecycle.ts';
import { flushLogs } from '../lib/log.ts';
import { isPlainHttpAnswer, notTlsError } from '../lib/tls-mismatch.ts';
import { FuseMount, knowsCallers, knowsHides, knowsOmittedTimes, requireLibfuse } from './adapter.ts';
import {
  defaultJournalDir,
  defaultStagingDir,
  defaultStagingPath,
  freeBytes,
  isDiskFull,
  LOW_FREE_BYTES,
  legacyJournal,
  makeCacheDir,
  refuseCacheDirInMount,
} from './cache-dir.ts';
import { userinfoError } from './endpoint-address.ts';
import { ENDPOINT_PROBE_MS } from './endpoint-probe.ts';
import { fsErrors } from './errors.ts';
import { settleJournal, waitForOpenFiles } from './stop.ts';
import { Filesystem } from './fs/filesystem.ts';
import { keepYoungGenerationSmall } from './heap.ts';
import { storeIdentity } from './fs/journal-record.ts';
import { FIRST_PART_SIZE, PARTS_IN_FLIGHT } from './fs/part-sizes.ts';
import { warnOfJournalLeft, warnOfJournalSpelledApart } from './journal-notices.ts';
import { diagnoseMount } from './mount-diagnosis.ts';
import { probeMount } from './mount-probe.ts';
import { checkEndpoint, checkMountpoint } from './mount-precheck.ts';
import { isObjectError } from './s3/object-client.ts';
import { S3ObjectClient } from './s3/s3-client.ts';
import { StoreAddressError } from './s3/store-address.ts';
import { CredentialsError } from './s3/credentials.ts';
import type { S3ReplyError } from './s3/s3-replies.ts';

const octalMode = (): ValueType<number> => ({
  expected: 'an octal permission mode such as 644 or 0755',
  placeholder: 'MODE',
  parse(raw) {
    const t = String(raw).trim();
    if (!/^0?[0-7]{3,4}$/.test(t)) throw new ValueError(`expected ${this.expected}`);
    return Number.parseInt(t, 8);
  },
  format: (v) => v.toString(8).padStart(4, '0'),
});

const MiB = 2 ** 20;
const PROBE_S = ENDPOINT_PROBE_MS / 1000;

export const mountOptions = {
  endpoint: optional(
    url(),
    `S3-compatible endpoint (path-style), with no user name or password (AWS credentials sign the requests); default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the AWS profile's endpoint_url, else AWS. It must answer a first, unsigned request within ${PROBE_S} s, in S3's XML, without a redirect`,
  ),
  region: optional(
    str('REGION'),
    "S3 region used for signing (and in AWS's endpoint); default: AWS_REGION, AWS_DEFAULT_REGION, the AWS profile's region, else us-east-1",
  ),
  readOnly: option(bool(), false, 'refuse every change with EROFS'),
  uid: optional(int(0, 2 ** 32 - 2, 'UID'), 'owner shown for objects without uid metadata (default: yours)'),
  gid: optional(int(0, 2 ** 32 - 2, 'GID'), 'group shown for objects without gid metadata (default: yours)'),
  fileMode: option(octalMode(), 0o644, 'permissions shown for objects without mode metadata'),
  dirMode: option(octalMode(), 0o755, 'permissions shown for directories without mode metadata'),
  cacheDir: optional(
    str('DIR'),
    'where staging files (and the --write-back journal) go, made if missing (mode 0700; a path that cannot be made, such as one under /proc, is refused); default: TMPDIR/estuary-UID, or ~/.cache/estuary/BUCKET[-PREFIX]-HASH of endpoint, bucket and prefix with --write-back',
  ),
  memoryLimit: option(size(64 * MiB), 1024 * MiB, 'hard budget for readahead, reads and write buffers (docs/SEMANTICS.md, "Memory")'),
  cacheTtl: option(duration(0), 60_000, 'how long names and attributes are trusted before asking again'),
  stagingLimit: option(
    size(0),
    16 * 2 ** 30,
    'largest existing object that may be changed in place (else EFBIG)',
  ),
  partSize: option(
    size(5 * MiB, 5 * 2 ** 30),
    FIRST_PART_SIZE,
    'first multipart part size (grows ×2 per 1000 parts)',
  ),
  uploadConcurrency: option(int(1, 64), PARTS_IN_FLIGHT, 'parts of one file uploaded at once'),
  readahead: option(
    size(MiB),
    64 * MiB,
    'largest readahead window per open file, in GETs of up to 32 MiB; raise it above 1 Gbit/s',
  ),
  renameDirLimit: option(int(1, 1_000_000), 1000, 'directories with more objects answer rename with EXDEV'),
  retries: option(int(1, 20), 6, 'attempts per S3 request, with backoff (503 SlowDown, resets, timeouts)'),
  requestTimeout: option(
    duration(100, 3_600_000),
    60_000,
    'an S3 request that sends or receives no byte for this long fails, and is retried per --retries (EIO after the last); also the longest wait for keys from the AWS credential chain (a credential_process)',
  ),
  abortUploadsAfter: option(
    duration(0),
    86_400_000,
    "at start, abort multipart uploads under the mount's prefix unfinished for longer than this (a killed mount leaves them, and they are billed); 0: never",
  ),
  allowOther: option(bool(), false, 'let other users use the mount (needs user_allow_other for non-root)'),
  allowNonEmpty: option(bool(), false, 'mount over a directory that holds files, hiding them while mounted'),
  writeBack: option(
    bool(),
    false,
    'close() returns once data is in a crash-safe journal under --cache-dir; uploads follow and resume after a restart',
  ),
};

interface Source {
  readonly bucket: string;
  readonly prefix: string;
}

export function parseSource(text: string): Source {
  const cut = text.indexOf('/');
  const bucket = cut < 0 ? text : text.slice(0, cut);
  const prefix = cut < 0 ? '' : text.slice(cut + 1);
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) && !/^[A-Za-z0-9_.-]{1,255}$/.test(bucket)) {
    throw fsErrors.badSource(text);
  }
  return { bucket, prefix };
}


/**
 * Files left in the journal folder older releases named by the bucket alone: they recorded no
 * endpoint, so a default mount never resumes them (they could belong to another store).
 */
async function warnOfLegacyJournal(bucket: string, prefix: string, log: { warn(o: object, m: string): void }) {
  const legacy = await legacyJournal(bucket, prefix);
  if (!legacy) return;
  log.warn(
    { journal: legacy.dir, files: legacy.files },
    `a write-back journal of an older release holds ${legacy.files} files that are not uploaded; mount with --cache-dir ${legacy.dir} on the endpoint they were written for to upload them`,
  );
}

async function warnOfLowSpace(cacheDir: string, log: { warn(o: object, m: string): void }) {
  const free = await freeBytes(cacheDir);
  if (free === undefined || free >= LOW_FREE_BYTES) return;
  log.warn(
    { cacheDir, freeBytes: free },
    `the cache directory has only ${(free / 2 ** 20).toFixed(0)} MiB free: changing an existing file needs a local copy of it (and --write-back keeps closed files there until uploaded); writes that do not fit fail with ENOSPC`,
  );
}

/** The mount's S3 client; an endpoint or region it cannot use is the user's to fix. */
function makeClient(options: ConstructorParameters<typeof S3ObjectClient>[0]): S3ObjectClient {
  try {
    return new S3ObjectClient(options);
  } catch (err) {
    if (err instanceof StoreAddressError) throw fsErrors.storeAddress(err.message);
    if (err instanceof CredentialsError) throw fsErrors.badCredentials(err.message);
    throw err;
  }
}

/** `webRefusal`: what to say instead of blaming the credentials or the bucket name (checkEndpoint). */
function startupError(err: unknown, bucket: string, endpoint: string, region: string, webRefusal?: EstuaryError): unknown {
  if (isPlainHttpAnswer(err)) return notTlsError('--endpoint', endpoint);
  const answer = (err as Error)?.cause as S3ReplyError | undefined;
  if (answer?.bucketRegion && answer.bucketRegion !== region) return fsErrors.wrongRegion(bucket, answer.bucketRegion, region);
  if (answer?.name === 'RequestTimeTooSkewed') return fsErrors.clockSkew(endpoint);
  if (webRefusal && (isObjectError(err, 'no-such-bucket') || isObjectError(err, 'access-denied'))) return webRefusal;
  if (isObjectError(err, 'no-such-bucket')) return fsErrors.noBucket(bucket, endpoint);
  if (isObjectError(err, 'access-denied')) return fsErrors.accessDenied(bucket);
  const cause = (err as Error)?.cause;
  if (cause instanceof CredentialsError) return fsErrors.badCredentials(cause.message);
  const names = [(err as Error)?.name, (cause as Error | undefined)?.name];
  if (names.includes('CredentialsProviderError')) return fsErrors.noCredentials();
  if (isObjectError(err)) return fsErrors.endpointDown(endpoint, err.message);
  return err;
}

export const command = defineCommand({
  name: 'mount',
  summary: 'mount an S3 bucket as a filesystem (FUSE)',
  description: `
Mounts BUCKET (or the keys under BUCKET/PREFIX) on MOUNTPOINT and stays in the foreground until
SIGINT/SIGTERM or \`estuary umount MOUNTPOINT\`. close() and fsync() return only once the data is in
the bucket, and report EIO when it could not be stored. Credentials come from the standard AWS chain
(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, instance roles); the endpoint and region from
--endpoint and --region, else from the AWS environment variables and shared config (see
docs/CONFIGURATION.md). Before mounting, one unsigned request to --endpoint must be answered within ${PROBE_S} s, and like S3 (XML, not a web page,
plain text, an empty body or a redirect elsewhere); a silent port, a trickling answer, an http://
address for a TLS port and an untrusted certificate are named at once. An HTML refusal (a proxy's
block page) followed by a refused bucket check is named as not S3, not blamed on the credentials.
A private CA is trusted through NODE_EXTRA_CA_CERTS. What the mount does and refuses is in
docs/SEMANTICS.md; for /etc/fstab see fuse/bin/mount.fuse.estuary.`,
  positionals: [
    { name: 'BUCKET[/PREFIX]', describe: 'the bucket, optionally with a key prefix to mount' },
    { name: 'MOUNTPOINT', describe: 'an existing directory' },
  ],
  examples: [
    {
      cmd: 'estuary mount kek-data /mnt/kek --endpoint http://127.0.0.1:9000',
      what: 'mount a bucket from a local S3-compatible server',
    },
    { cmd: 'estuary mount kek-data/run42 /mnt/run42 --read-only', what: 'mount one prefix, read-only' },
    { cmd: 'estuary umount /mnt/kek', what: 'unmount it again (the mount process then exits)' },
  ],
  options: mountOptions,
  async run({ config, args, log }) {
    keepYoungGenerationSmall();
    const { bucket, prefix } = parseSource(args[0]!);
    const userinfo = config.endpoint === undefined ? undefined : userinfoError(config.endpoint);
    if (userinfo) throw userinfo;
    const mountpoint = args[1]!;
    // First: an endpoint or region the environment or shared config sets wrong needs no network to name.
    const client = makeClient({
      bucket,
      endpoint: config.endpoint,
      region: config.region,
      maxAttempts: config.retries,
      idleTimeoutMs: config.requestTimeout,
      // Parallel parts of several files plus readahead chunks: enough sockets not to queue.
      maxSockets: 64,
    });
    const { address } = client;
    const endpoint =
      config.endpoint ?? (address.endpointFrom === 'AWS' ? 'AWS S3' : `${address.bucketUrl.origin} (${address.endpointFrom})`);
    // The real path: /proc/mounts names it so, and the mount is made and watched there.
    const target = await checkMountpoint(mountpoint);
    // The store however it is spelled: `kek/run42/` finds the journal `kek/run42` left.
    const journalIdentity = storeIdentity(config.endpoint, bucket, prefix);
    const cacheDir =
      config.cacheDir ?? (config.writeBack ? defaultJournalDir(journalIdentity) : defaultStagingPath());
    await refuseCacheDirInMount(cacheDir, target, mountpoint, config.cacheDir !== undefined);
    // Before the bucket is asked: what libfuse would refuse, named with its cause and remedy.
    const access = { allowOther: config.allowOther, allowNonEmpty: config.allowNonEmpty };
    const refused = diagnoseMount(await probeMount(mountpoint, access));
    if (refused) throw refused;
    requireLibfuse();
    if (config.allowOther && !knowsCallers())
      log.warn({}, 'fuse-native was not rebuilt by npm ci: files other users create belong to the mounting user');
    if (!knowsOmittedTimes())
      log.warn({}, 'fuse-native was not rebuilt by npm ci: touch -m and touch -a leave the times unchanged');
    if (!knowsHides())
      log.warn({}, 'fuse-native was not rebuilt by npm ci: renaming an open file to .fuse_hidden<16 hex digits> removes it');
    const webRefusal = config.endpoint === undefined ? undefined : await checkEndpoint(config.endpoint, bucket);
    if (config.cacheDir === undefined && !config.writeBack) await defaultStagingDir(cacheDir);
    else await makeCacheDir(cacheDir);
    if (config.writeBack && config.cacheDir === undefined) {
      await warnOfLegacyJournal(bucket, prefix, log);
      const typed = { endpoint: config.endpoint?.replace(/\/+$/, '') ?? 'aws', bucket, prefix };
      await warnOfJournalSpelledApart(typed, cacheDir, log);
    }
    if (!config.writeBack) await warnOfJournalLeft(cacheDir, log);
    const fs = new Filesystem({
      client,
      prefix,
      readOnly: config.readOnly,
      defaults: {
        uid: config.uid ?? process.getuid?.() ?? 0,
        gid: config.gid ?? process.getgid?.() ?? 0,
        fileMode: config.fileMode,
        dirMode: config.dirMode,
      },
      cacheTtlMs: config.cacheTtl,
      memoryLimit: config.memoryLimit,
      cacheDir,
      stagingLimit: config.stagingLimit,
      firstPartSize: config.partSize,
      maxInFlight: config.uploadConcurrency,
      maxReadahead: config.readahead,
      renameDirLimit: config.renameDirLimit,
      // A writer that waits this long for memory moves its file to local disk instead.
      memoryWaitMs: 2000,
      writeBack: config.writeBack,
      journalIdentity,
      checkPermissions: config.allowOther,
      abortUploadsAfterMs: config.abortUploadsAfter,
      log,
    });
    try {
      await fs.start().catch((err: unknown) => {
        if (isEstuaryError(err)) throw err;
        if (isDiskFull(err)) throw fsErrors.cacheDirFull(cacheDir);
        if ((err as NodeJS.ErrnoException)?.code && !isObjectError(err) && !isPlainHttpAnswer(err)) {
          throw fsErrors.cacheDir(cacheDir, String((err as Error).message));
        }
        throw startupError(err, bucket, endpoint, address.region, webRefusal);
      });
      await warnOfLowSpace(cacheDir, log);
      const mount = new FuseMount(
        fs,
        target,
        { source: `estuary#${args[0]}`, allowOther: config.allowOther, nonEmpty: config.allowNonEmpty },
        log,
      );
      await mount.mount().catch(async (err: unknown) => {
        throw (
          diagnoseMount(await probeMount(mountpoint, access)) ??
          fsErrors.mountFailed(mountpoint, String((err as Error)?.message ?? err))
        );
      });
      let unmounted: (why: string) => void = () => undefined;
      const stopWhen = new Promise<string>((resolve) => (unmounted = resolve));
      const watcher = mount.watchEnd(() => unmounted('unmounted from outside'));
      const running = runUntilSignalled(
        {
          stop: async (deadline) => {
            watcher.stop();
            const notWrittenBefore = fs.notWritten;
            await mount.detach().catch((err: unknown) => log.debug({ err: String(err) }, 'already detached'));
            await waitForOpenFiles(fs, mount, log);
            const failed = await fs.drain();
            if (failed > 0) log.error({ failed }, 'some files could not be uploaded before unmount');
            await settleJournal(fs, deadline, cacheDir, log);
            await fs.journal?.close();
            mount.release();
            log.info({ mountpoint }, 'unmounted');
            // Whoever stopped the mount learns from the status that a file did not reach the bucket.
            return failed > 0 || fs.notWritten > notWrittenBefore ? 1 : 0;
          },
        },
        // Uploads are never cut short: the deadline only makes the log say what is still running.
        {
          log,
          shutdownTimeoutMs: config.shutdownTimeout,
          stopWhen,
          // A closing terminal or ssh session stops the mount as SIGTERM does: its open files finish.
          stopSignals: ['SIGINT', 'SIGTERM', 'SIGHUP'],
          deadlineSays: 'shutdown deadline reached: still waiting for open files and uploads (a second signal exits at once)',
        },
      );
      // Only now, with the signal handlers installed (synchronously, above): whoever waits for this
      // line may send SIGTERM at once, and before the handlers it killed the process outright.
      log.info({ mountpoint, bucket, prefix, endpoint }, `mounted ${args[0]} on ${mountpoint}`);
      return await running;
    } catch (err) {
      if (isEstuaryError(err)) throw err;
      throw startupError(err, bucket, endpoint, address.region, webRefusal);
    } finally {
      // Before the client closes: the last tries of aborts that failed go through it.
      await fs.stop(config.shutdownTimeout).catch((err: unknown) => log.warn({ err: String(err) }, 'could not remove staging files'));
      client.destroy();
      exitSoonAfterStop(log);
    }
  },
});

/** How long a stopped mount may take to exit on its own. */
const EXIT_AFTER_STOP_MS = 2000;

/**
 * Whoever stopped the mount (a service manager, `estuary umount`, a test) waits for its exit: a
 * handle a library left open must not keep it alive. The process normally exits before this
 * timer, which does not itself keep it running; if it fires, the log names what was left.
 */
function exitSoonAfterStop(log: { warn(o: object, msg: string): void }): void {
  setTimeout(() => {
    log.warn({ handles: process.getActiveResourcesInfo() }, `still running ${EXIT_AFTER_STOP_MS / 1000} s after it stopped: exiting`);
    flushLogs();
    process.exit();
  }, EXIT_AFTER_STOP_MS).unref();
}
