// kill -9 of a --write-back mount while libfuse's hide of a removed open file, or a user's rename
// of an open file to a .fuse_hidden name, is the last thing that happened to a file (the removed
// one being written by a descriptor that never closes). docs/SEMANTICS.md, "unlink.":
// nothing of a removed open file is in the bucket "under any name meanwhile, nor after a crash";
// a user's rename to a name of that form "is a rename like any other", so the user's bytes end
// in the bucket under that name once the journal resumes.

import { spawn } from 'node:child_process';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { type S3Server, startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';

afterAll(runTeardowns);

const OPS = new URL('./hidden4-ops.py', import.meta.url).pathname;
const fuse = fuseAvailable();

async function keys(server: S3Server, bucket: string): Promise<string[]> {
  const r = await s3Client(server).send(new ListObjectsV2Command({ Bucket: bucket }));
  return (r.Contents ?? []).map((o) => o.Key!).sort();
}

async function body(server: S3Server, bucket: string, key: string): Promise<string> {
  const r = await s3Client(server).send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return r.Body!.transformToString();
}

/** Runs `hold` of hidden4-ops.py and resolves with its line once it holds the descriptor. */
function hold(path: string, how: string, data = '-'): Promise<Record<string, string>> {
  const py = spawn('python3', [OPS, 'hold', path, how, data], { stdio: ['ignore', 'pipe', 'pipe'] });
  onTeardown(() => void py.kill('SIGKILL'));
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hold ${how} printed nothing: ${out}`)), 20_000);
    const take = (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        try {
          resolve(JSON.parse(out.split('\n')[0]!) as Record<string, string>);
        } catch {
          reject(new Error(out));
        }
      }
    };
    py.stdout.on('data', take);
    py.stderr.on('data', take);
  });
}

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !(await check())) await new Promise((r) => setTimeout(r, 200));
}

describe.runIf(fuse.ok)('mount: kill -9 after a hide or a user’s hidden-form rename', () => {
  for (const mode of [[], ['--write-back']]) {
  it(`the removed file does not come back; the user’s renamed file does, under its new name (${mode.join(' ') || 'default'})`, async () => {
    const server = await startS3rver({ buckets: ['data'] });
    const cache = await tempDir('estuary-cache-');
    const args = [...mode, '--cache-dir', cache];
    const m = await mountBucket(server, 'data', args);
    const w = await sh(`mkdir '${m.dir}/k'`);
    expect(w.code, w.out).toBe(0);
    const made = await sh(`printf removed > '${m.dir}/k/F' && printf kept > '${m.dir}/k/U'`);
    expect(made.code, made.out).toBe(0);
    // The journal has sent both; F is then changed by a writer that never closes.
    await until(async () => (await keys(server, 'data')).length === 3, 15_000);
    const name = '.fuse_hidden00000000000000aa';
    const [rm, mv] = await Promise.all([hold(`${m.dir}/k/F`, 'rm', 'changed'), hold(`${m.dir}/k/U`, name)]);
    expect(rm).toEqual({ op: 'ok', fd_bytes: 'changed' });
    expect(mv).toEqual({ op: 'ok', fd_bytes: 'kept' });
    m.child.proc.kill('SIGKILL');
    await m.child.exited;
    await sh(`fusermount -uz '${m.dir}' || umount -l '${m.dir}'`);
    const again = await mountBucket(server, 'data', args);
    await until(async () => (await keys(server, 'data')).includes(`k/${name}`), 15_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await keys(server, 'data')).toEqual(['k/', `k/${name}`]);
    expect(await body(server, 'data', `k/${name}`)).toBe('kept');
    const ls = await sh(`ls -A '${again.dir}/k'`);
    expect(ls.out.trim()).toBe(name);
  });
}
});
