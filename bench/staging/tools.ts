// The bulk-copy tools `estuary bench staging` compares: `estuary stage`, `rclone copy` and the
// `aws s3 cp --recursive` of Debian's awscli, each given the same directory, bucket prefix and
// keys, each run as its own process so its CPU and peak memory are its own.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Backend } from '../backends/backend.ts';
import { runCommand } from '../proc.ts';

export interface CopyTool {
  readonly name: string;
  /** Debian package that provides the command; estuary needs none. */
  readonly pkg?: string;
  readonly command: string;
  probe(): Promise<string | undefined>;
  /** The command line copying `from` to `to` (one of them is s3://bucket/prefix/). */
  argv(b: Backend, from: string, to: string, configDir: string): Promise<{ cmd: string; args: string[]; env: NodeJS.ProcessEnv }>;
}

const REPO_ROOT = new URL('../../', import.meta.url).pathname;

function keysEnv(b: Backend): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_ACCESS_KEY_ID: b.accessKeyId, AWS_SECRET_ACCESS_KEY: b.secretAccessKey, AWS_REGION: b.region };
  // rclone 1.60 refuses to start when AWS_CA_BUNDLE is set; the stores here are plain http.
  delete env.AWS_CA_BUNDLE;
  delete env.AWS_SESSION_TOKEN;
  return env;
}

async function versionOf(cmd: string, args: string[], re: RegExp): Promise<string | undefined> {
  const r = await runCommand(cmd, args, { timeoutMs: 10_000 });
  return r.code === 0 ? (re.exec(r.output)?.[1] ?? 'unknown') : undefined;
}

export const stageTool: CopyTool = {
  name: 'estuary',
  command: process.execPath,
  probe: async () => 'this tree',
  async argv(b, from, to, configDir) {
    return {
      cmd: process.execPath,
      args: [join(REPO_ROOT, 'bin', 'estuary.js'), 'stage', 'sync', from, to, '--endpoint', b.endpoint, '--region', b.region, '--state-dir', join(configDir, 'stage-state'), '--log-format', 'json'],
      env: keysEnv(b),
    };
  },
};

export const rcloneTool: CopyTool = {
  name: 'rclone',
  pkg: 'rclone',
  command: 'rclone',
  probe: () => versionOf('rclone', ['version'], /rclone v(\S+)/),
  async argv(b, from, to, configDir) {
    const conf = join(configDir, 'rclone.conf');
    await writeFile(
      conf,
      ['[s3]', 'type = s3', 'provider = Other', `endpoint = ${b.endpoint}`, `region = ${b.region}`, 'force_path_style = true',
        `access_key_id = ${b.accessKeyId}`, `secret_access_key = ${b.secretAccessKey}`, ''].join('\n'),
      { mode: 0o600 },
    );
    const remote = (p: string) => (p.startsWith('s3://') ? `s3:${p.slice(5)}` : p);
    return { cmd: 'rclone', args: ['copy', '--config', conf, remote(from), remote(to)], env: keysEnv(b) };
  },
};

export const awsTool: CopyTool = {
  name: 'aws-cli',
  pkg: 'awscli',
  command: 'aws',
  probe: () => versionOf('aws', ['--version'], /aws-cli\/(\S+)/),
  async argv(b, from, to) {
    return { cmd: 'aws', args: ['s3', 'cp', '--recursive', '--only-show-errors', '--endpoint-url', b.endpoint, from, to], env: keysEnv(b) };
  },
};

/** The AWS SDK alone moving the same files (bench/staging/sdk-copy.ts): the floor of an SDK-based copy. */
export const sdkAloneTool: CopyTool = {
  name: 'sdk-alone',
  command: process.execPath,
  probe: async () => 'the AWS SDK alone: parallel multipart PUTs and ranged GETs, no hashing, journal or checks',
  async argv(b, from, to) {
    return { cmd: process.execPath, args: [join(REPO_ROOT, 'bench', 'staging', 'sdk-copy.ts'), 'copy', from, to], env: { ...keysEnv(b), BENCH_ENDPOINT: b.endpoint } };
  },
};

export const COPY_TOOLS: readonly CopyTool[] = [stageTool, rcloneTool, awsTool, sdkAloneTool];

/**
 * Costs measured beside the copies, in the same rounds: the SHA-256 pass `stage out` makes before
 * sending (its rate, on the up row), and the resident memory of Node with the SDK loaded and
 * nothing moved (on the peak-memory row).
 */
export interface Floor {
  readonly name: 'sha256-pass' | 'node-sdk-idle';
  argv(dir: string, b: Backend): { cmd: string; args: string[]; env: NodeJS.ProcessEnv };
}

const script = join(REPO_ROOT, 'bench', 'staging', 'sdk-copy.ts');
export const FLOORS: readonly Floor[] = [
  { name: 'sha256-pass', argv: (dir, b) => ({ cmd: process.execPath, args: [script, 'hash', dir], env: keysEnv(b) }) },
  { name: 'node-sdk-idle', argv: (_dir, b) => ({ cmd: process.execPath, args: [script, 'idle'], env: { ...keysEnv(b), BENCH_ENDPOINT: b.endpoint } }) },
];
