// Attacks on how the mount tells libfuse's hide of a removed open file (a rename to
// .fuse_hidden<16 hex> inside the unlink's kernel request) from a user's rename, through a real
// mount over s3rver. docs/SEMANTICS.md, "unlink.": the object of a removed open file is deleted at
// once and nothing of it is in the bucket under any name; a user's rename to a name of that form
// "is a rename like any other". So: a user's file renamed onto a hidden name is the user's file
// (its bytes, stat and rm as any file), and rm of it leaves no .fuse_hidden key in the bucket.

import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { type S3Server, startS3rver } from '../../helpers/s3rver.ts';
import { fuseAvailable, type Mounted, mountBucket, sh } from '../mount-helpers.ts';

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

/**
 * Runs one op of hidden4-ops.py; when the mount's trace log shows libfuse probing a hidden name
 * under `dir` (the getattr inside the unlink), hands that name to the script.
 */
async function runOp(m: Mounted, op: string, dir: string): Promise<Record<string, string>> {
  const before = m.child.output().length;
  const py = spawn('python3', [OPS, op, join(m.dir, dir)], { stdio: ['pipe', 'pipe', 'pipe'] });
  onTeardown(() => void py.kill('SIGKILL'));
  let out = '';
  py.stdout.on('data', (d: Buffer) => (out += d.toString()));
  py.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const probe = new RegExp(`"path":"/${dir}/(\\.fuse_hidden[0-9a-f]{16})"`);
  const deadline = Date.now() + 10_000;
  let name: string | undefined;
  while (!name && Date.now() < deadline) {
    name = probe.exec(m.child.output().slice(before))?.[1];
    if (!name) await new Promise((r) => setTimeout(r, 20));
  }
  expect(name, `no hidden name probed; mount said:\n${m.child.output().slice(before)}`).toBeDefined();
  py.stdin.end(`${name}\n`);
  await new Promise((r) => py.on('close', r));
  const line = out.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line) as Record<string, string>;
  } catch {
    throw new Error(`hidden4-ops.py ${op}: ${out}`);
  }
}

describe.runIf(fuse.ok)('mount: a user’s rename onto the hidden name of a removed open file', () => {
  for (const extra of [[], ['--write-back']]) {
    it(`is the user’s file, and rm of it leaves no .fuse_hidden key (${extra.join(' ') || 'default'})`, async () => {
      const server = await startS3rver({ buckets: ['data'] });
      const m = await mountBucket(server, 'data', ['--log-level', 'trace', ...extra]);
      const w = await sh(`mkdir '${m.dir}/d' && printf removed-bytes > '${m.dir}/d/F' && printf user-bytes > '${m.dir}/d/G'`);
      expect(w.code, w.out).toBe(0);
      const r = await runOp(m, 'rehide', 'd');
      // libfuse re-hides the removed file (it is open) and then renames G onto the name.
      expect(r.rename, JSON.stringify(r)).toBe('ok');
      expect(r.fd_bytes).toBe('removed-bytes');
      // The name now holds G: its bytes, as any file renamed there.
      expect(r.h1_bytes, JSON.stringify(r)).toBe('user-bytes');
      expect(r.rm, JSON.stringify(r)).toBe('ok');
      // Removed by the user: gone from the bucket, and no .fuse_hidden key anywhere.
      expect(await keys(server, 'data')).toEqual(['d/']);
    });
  }
});

describe.runIf(fuse.ok)('mount: a user’s rename of the hidden name of a removed open file', () => {
  for (const [op, bytes] of [['recover', 'written-after-open'], ['recover_ro', 'original']]) {
    const how = op === 'recover' ? 'written' : 'read only';
    it(`moves the bytes the descriptor holds to the new name, or refuses; never a half state (${how})`, async () => {
      const server = await startS3rver({ buckets: ['data'] });
      const m = await mountBucket(server, 'data', ['--log-level', 'trace']);
      const w = await sh(`mkdir '${m.dir}/e' && printf original > '${m.dir}/e/F'`);
      expect(w.code, w.out).toBe(0);
      const r = await runOp(m, op, 'e');
      expect(r.fd_bytes, JSON.stringify(r)).toBe(bytes);
      const left = await keys(server, 'data');
      expect(left.filter((k) => k.includes('.fuse_hidden'))).toEqual([]);
      if (r.rename === 'ok') {
        // Renamed like any other file: R holds what the descriptor held, in the mount and bucket.
        expect(r.r_bytes, JSON.stringify(r)).toBe(bytes);
        expect(left).toEqual(['e/', 'e/R']);
        expect(await body(server, 'data', 'e/R')).toBe(bytes);
        expect(await readFile(join(m.dir, 'e/R'), 'utf8')).toBe(bytes);
      } else {
        // Refused: the name R was never made, and the error says so.
        expect(left).toEqual(['e/']);
        expect(r.r_bytes).toMatch(/^error/);
        expect(r.rename).not.toBe('Input/output error');
      }
    });
  }
});

describe.runIf(fuse.ok)('mount: a user’s rename of the hidden name of a removed file over an existing file', () => {
  it('replaces it with the bytes the descriptor holds, or refuses and leaves it as it was', async () => {
    const server = await startS3rver({ buckets: ['data'] });
    const m = await mountBucket(server, 'data', ['--log-level', 'trace']);
    const w = await sh(`mkdir '${m.dir}/x' && printf original > '${m.dir}/x/F' && printf existing > '${m.dir}/x/R'`);
    expect(w.code, w.out).toBe(0);
    const r = await runOp(m, 'recover_over', 'x');
    const want = r.rename === 'ok' ? 'written-after-open' : 'existing';
    // Either way the name R holds a file, in the mount and in the bucket.
    expect(await keys(server, 'data'), JSON.stringify(r)).toEqual(['x/', 'x/R']);
    expect(r.r_bytes, JSON.stringify(r)).toBe(want);
    expect(await body(server, 'data', 'x/R')).toBe(want);
  });
});

describe.runIf(fuse.ok)('mount: a user’s file under the hidden name of a file removed with its directory', () => {
  it('is removed from the bucket by rm, as any file', async () => {
    const server = await startS3rver({ buckets: ['data'] });
    const m = await mountBucket(server, 'data', ['--log-level', 'trace']);
    const w = await sh(`mkdir '${m.dir}/g' && printf removed > '${m.dir}/g/F'`);
    expect(w.code, w.out).toBe(0);
    const r = await runOp(m, 'reuse', 'g');
    expect(r.bytes, JSON.stringify(r)).toBe('user-file');
    expect(r.rm, JSON.stringify(r)).toBe('ok');
    // rm said it removed the user's file: the bucket must not keep it.
    expect(await keys(server, 'data')).toEqual(['g/']);
    expect(r.after_rm).toEqual([]);
  });
});

describe.runIf(fuse.ok)('mount: a user’s new file written under the hidden name of a removed open file', () => {
  it('is the user’s file in the bucket once closed, or the create is refused with a true errno', async () => {
    const server = await startS3rver({ buckets: ['data'] });
    const m = await mountBucket(server, 'data', ['--log-level', 'trace']);
    const w = await sh(`mkdir '${m.dir}/c' && printf removed-bytes > '${m.dir}/c/F'`);
    expect(w.code, w.out).toBe(0);
    const r = await runOp(m, 'create_on_hidden', 'c');
    const left = await keys(server, 'data');
    if (r.create === 'ok') {
      // The open(O_CREAT|O_TRUNC) and write returned 0: what was written is not thrown away.
      expect(r.after_close, JSON.stringify(r)).toBe('user-new');
      expect(left).toEqual(['c/', `c/${r.h1}`]);
      expect(await body(server, 'data', `c/${r.h1}`)).toBe('user-new');
    } else {
      // Refused: not with ENOENT, which open(2) with O_CREAT in an existing directory never
      // answers (cp and rsync of a tree holding another FUSE file system's leftover
      // .fuse_hidden files would report the file as missing). docs/SEMANTICS.md lists no refusal.
      expect(r.create, JSON.stringify(r)).not.toBe('No such file or directory');
      expect(left).toEqual(['c/']);
    }
  });
});
