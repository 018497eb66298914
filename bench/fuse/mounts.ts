// The filesystems compared: how to find each one, how to mount it in the foreground against the
// run's backend, and how to unmount it so that everything written has reached S3 (the "up" time
// includes that, since a mount that acknowledges writes before uploading them has not finished).
// Each mount runs as a child process, registered for cleanup with a lazy unmount as last resort.

import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Backend } from '../backends/backend.ts';
import { lazyUnmountSync, registerCleanup } from '../cleanup.ts';
import { type BenchChild, lastLine, runCommand, startProcess } from '../proc.ts';
import { type ProcessUsage, sampleUsage } from './usage.ts';

export interface Probe {
  readonly available: boolean;
  readonly reason?: string;
  readonly version?: string;
}

export interface MountRequest {
  readonly bucket: string;
  readonly mountpoint: string;
  readonly backend: Backend;
  /** A private directory for config files (passwords, rclone remotes). */
  readonly configDir: string;
}

export interface Mounted {
  /** Unmounts and waits for the filesystem process to exit (pending uploads included). */
  unmount(): Promise<void>;
  /** The peer's output so far, for failure reasons. */
  output(): string;
  /** CPU and peak memory of the filesystem process over its life, as last sampled. */
  usage(): ProcessUsage | undefined;
}

export interface MountPeer {
  readonly name: string;
  /** Runs only when `--peers` names it (a variant for one question, not a column of every run). */
  readonly onRequest?: boolean;
  probe(): Promise<Probe>;
  mount(req: MountRequest): Promise<Mounted>;
}

const REPO_ROOT = new URL('../../', import.meta.url).pathname;

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}
// Generous: estuary and s3fs flush a whole 1000 MB file on unmount, at 1 Gbit/s that is ≈10 s, on
// a slower emulated link a few minutes; a hang beyond this is a failure, not a slow peer.
const UNMOUNT_TIMEOUT_MS = 15 * 60_000;
const MOUNT_TIMEOUT_MS = 30_000;

function awsEnv(b: Backend): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AWS_ACCESS_KEY_ID: b.accessKeyId,
    AWS_SECRET_ACCESS_KEY: b.secretAccessKey,
    AWS_REGION: b.region,
  };
}

/** "Amazon Simple Storage Service File System V1.90 (commit…)" → "s3fs 1.90". */
export function versionFrom(bin: string, output: string): string {
  const m = /\bv?(\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?)/i.exec(output);
  return m ? `${bin} ${m[1]}` : `${bin} (version unknown)`;
}

async function onPath(bin: string, versionArgs: string[]): Promise<Probe> {
  const r = await runCommand(bin, versionArgs, { timeoutMs: 10_000 });
  if (r.code === 127 || /ENOENT/.test(r.output)) return { available: false, reason: `${bin} not on PATH` };
  return { available: true, version: versionFrom(bin, r.output) };
}

async function isMounted(mountpoint: string): Promise<boolean> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info.split('\n').some((l) => l.split(' ')[4] === mountpoint);
}

async function waitMounted(child: BenchChild, mountpoint: string, name: string): Promise<void> {
  const deadline = Date.now() + MOUNT_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await isMounted(mountpoint)) return;
    if (!child.isRunning())
      throw new Error(`${name} exited before mounting: ${lastLine(child.output()) || 'no output'}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not mount within ${MOUNT_TIMEOUT_MS / 1000} s: ${lastLine(child.output())}`);
}

/** Starts a foreground mount process and tracks it until it has unmounted and exited. */
async function foregroundMount(
  name: string,
  mountpoint: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  stopWith: 'umount' | 'sigterm',
): Promise<Mounted> {
  const child = startProcess(name, command, args, { env });
  const sampler = sampleUsage(child.pid);
  void child.exited.then(() => sampler.stop());
  const release = registerCleanup(
    `${name} mount at ${mountpoint}`,
    async () => {
      if (await isMounted(mountpoint)) await runCommand('umount', ['-l', mountpoint], { timeoutMs: 10_000 });
    },
    () => lazyUnmountSync(mountpoint),
  );
  try {
    await waitMounted(child, mountpoint, name);
  } catch (err) {
    await child.stop('SIGKILL');
    await release();
    throw err;
  }
  return {
    output: () => child.output(),
    usage: () => sampler.last(),
    async unmount() {
      if (stopWith === 'sigterm') child.proc.kill('SIGTERM');
      else {
        const r = await runCommand('umount', [mountpoint], { timeoutMs: UNMOUNT_TIMEOUT_MS });
        if (r.code !== 0) child.proc.kill('SIGTERM');
      }
      const timer = setTimeout(() => child.proc.kill('SIGKILL'), UNMOUNT_TIMEOUT_MS);
      const code = await child.exited;
      clearTimeout(timer);
      await release();
      if (code !== 0 && code !== null)
        throw new Error(`${name} exited with ${code} on unmount: ${lastLine(child.output())}`);
    },
  };
}

/**
 * estuary's mount from this tree. `write-back` is the same mount with --write-back: close()
 * returns once the file is in the crash-safe local journal and uploads overlap across files; the
 * "up" time still ends only when unmount has drained the journal into the bucket.
 */
function estuaryPeer(name: string, extra: (req: MountRequest) => readonly string[]): MountPeer {
  return {
    name,
    async probe() {
      if (!existsSync(join(REPO_ROOT, 'fuse', 'command.ts')))
        return { available: false, reason: "estuary's mount (fuse/command.ts) is not in this tree yet" };
      return { available: true, version: `estuary ${packageVersion()} (this tree)` };
    },
    mount: (req) =>
      foregroundMount(
        name,
        req.mountpoint,
        process.execPath,
        [
          join(REPO_ROOT, 'bin', 'estuary.js'),
          'mount',
          req.bucket,
          req.mountpoint,
          '--endpoint',
          req.backend.endpoint,
          ...extra(req),
        ],
        awsEnv(req.backend),
        'sigterm',
      ),
  };
}

const estuary = estuaryPeer('estuary', () => []);
const estuaryWriteBack = estuaryPeer('estuary-write-back', (req) => [
  '--write-back',
  '--cache-dir',
  join(req.configDir, 'estuary-write-back'),
]);

/**
 * estuary holding rclone's buffers (5 MiB parts, 4 in flight, 16 MiB read ahead per file: its
 * --s3-chunk-size, --s3-upload-concurrency and --buffer-size defaults), so the two mounts'
 * memory compares at equal buffering and the speed those buffers cost shows.
 */
const estuaryRcloneBuffers: MountPeer = {
  ...estuaryPeer('estuary-rclone-buffers', () => ['--part-size', '5MiB', '--upload-concurrency', '4', '--readahead', '16MiB']),
  onRequest: true,
};

const s3fs: MountPeer = {
  name: 's3fs',
  probe: () => onPath('s3fs', ['--version']),
  async mount(req) {
    // Keys through s3fs's environment variables, not a passwd file: that file splits on ':', and
    // Swift's access keys contain one ("test:tester").
    const env = {
      ...process.env,
      AWSACCESSKEYID: req.backend.accessKeyId,
      AWSSECRETACCESSKEY: req.backend.secretAccessKey,
    };
    const args = [
      req.bucket,
      req.mountpoint,
      '-f',
      '-o',
      `url=${req.backend.endpoint}`,
      '-o',
      'use_path_request_style',
    ];
    args.push('-o', `endpoint=${req.backend.region}`);
    return foregroundMount('s3fs', req.mountpoint, 's3fs', args, env, 'umount');
  },
};

const rclone: MountPeer = {
  name: 'rclone',
  probe: () => onPath('rclone', ['version']),
  async mount(req) {
    const conf = join(req.configDir, 'rclone.conf');
    const b = req.backend;
    const remote = [
      '[bench]',
      'type = s3',
      'provider = Other',
      `endpoint = ${b.endpoint}`,
      `region = ${b.region}`,
    ];
    remote.push(
      `access_key_id = ${b.accessKeyId}`,
      `secret_access_key = ${b.secretAccessKey}`,
      'force_path_style = true',
    );
    await writeFile(conf, `${remote.join('\n')}\n`, { mode: 0o600 });
    // rclone 1.60 refuses to start when AWS_CA_BUNDLE is set (this kind of machine sets it).
    const env = { ...process.env };
    delete env.AWS_CA_BUNDLE;
    // --vfs-cache-mode off: writes stream to S3 and close waits for them; the "writes" mode returns
    // from cp before the upload and lost a file when unmounted right after, which is not a copy.
    const args = [
      'mount',
      `bench:${req.bucket}`,
      req.mountpoint,
      '--config',
      conf,
      '--vfs-cache-mode',
      'off',
    ];
    return foregroundMount('rclone', req.mountpoint, 'rclone', args, env, 'umount');
  },
};

function goofysLike(name: 'goofys' | 'geesefs'): MountPeer {
  return {
    name,
    probe: () => onPath(name, ['--version']),
    mount: (req) =>
      foregroundMount(
        name,
        req.mountpoint,
        name,
        ['-f', '--endpoint', req.backend.endpoint, '--region', req.backend.region, req.bucket, req.mountpoint],
        awsEnv(req.backend),
        'umount',
      ),
  };
}

/**
 * mountpoint-s3 with the deletes and overwrites it refuses by default allowed, as the other mounts
 * allow them. It sends a CRC32C checksum with every upload by default; s3rver and Swift's s3api
 * (2.30) do not take them, so against those it uploads without, as estuary and s3fs do.
 */
const mountpointS3: MountPeer = {
  name: 'mountpoint-s3',
  probe: () => onPath('mount-s3', ['--version']),
  mount: (req) =>
    foregroundMount(
      'mountpoint-s3',
      req.mountpoint,
      'mount-s3',
      [
        '--foreground',
        '--endpoint-url',
        req.backend.endpoint,
        '--force-path-style',
        '--region',
        req.backend.region,
        '--allow-delete',
        '--allow-overwrite',
        ...(req.backend.kind === 'endpoint' ? [] : ['--upload-checksums', 'off']),
        req.bucket,
        req.mountpoint,
      ],
      awsEnv(req.backend),
      'umount',
    ),
};

/** In table order: estuary (its write-back mode, and with rclone's buffer sizes) first, the paper's s3fs baseline, then the other tools. */
export const MOUNT_PEERS: readonly MountPeer[] = [
  estuary,
  estuaryWriteBack,
  estuaryRcloneBuffers,
  s3fs,
  rclone,
  goofysLike('goofys'),
  goofysLike('geesefs'),
  mountpointS3,
];
