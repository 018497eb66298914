// s3fs-fuse mounting a bucket through the gateway with a scoped credential (keys and session token
// in s3fs's environment variables), in the foreground as a tracked child, unmounted after use and
// lazily in teardown if a test failed half-way.

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { onTeardown } from '../../helpers/cleanup.ts';
import { startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import type { Creds } from './s3-clients.ts';

const run = promisify(execFile);
const MOUNT_TIMEOUT_MS = 30_000;

async function mounted(path: string): Promise<boolean> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info.split('\n').some((l) => l.split(' ')[4] === path);
}

export interface S3fsMount {
  readonly path: string;
  unmount(): Promise<void>;
}

/** Mounts `bucket` of the gateway at a fresh directory; multipart at S3's smallest part, 5 MiB. */
export async function mountS3fs(gateway: string, bucket: string, c: Creds): Promise<S3fsMount> {
  const path = await tempDir('estuary-s3fs-');
  const env = {
    PATH: process.env.PATH,
    AWSACCESSKEYID: c.accessKeyId,
    AWSSECRETACCESSKEY: c.secretAccessKey,
    AWSSESSIONTOKEN: c.sessionToken,
  };
  const opts = [`url=${gateway}`, 'use_path_request_style', 'endpoint=us-east-1', 'multipart_size=5', 'stat_cache_expire=1'];
  const child = startChild('s3fs', [bucket, path, '-f', ...opts.flatMap((o) => ['-o', o])], { env });
  const lazy = async () => {
    if (await mounted(path)) await run('umount', ['-l', path]).catch(() => undefined);
  };
  onTeardown(lazy);
  const deadline = Date.now() + MOUNT_TIMEOUT_MS;
  while (!(await mounted(path))) {
    if (child.proc.exitCode !== null || Date.now() > deadline) {
      await child.stop('SIGKILL');
      throw new Error(`s3fs did not mount: ${child.output().trim().split('\n').pop()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    path,
    async unmount() {
      await run('umount', [path]);
      await child.stop('SIGTERM', 10_000);
    },
  };
}
