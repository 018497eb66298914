// Attacks on libfuse's hides that are not an unlink: a rename over an open file (libfuse hides the
// target inside the RENAME request, then renames the source onto it), within a directory and
// across directories, and users' renames of open files to .fuse_hidden names in many directories
// at once while libfuse hides files there. Real mounts over s3rver and MinIO, default and
// --write-back. docs/SEMANTICS.md, "unlink.": "A file replaced by a `rename` over it is removed
// the same way" (its object goes, nothing of it stays in the bucket, its descriptors keep working
// and publish nothing), and "a user's rename to a name of that form ... is a rename like any
// other". Table "Refused, and with which errno": hard links, EPERM.

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startMinio } from '../../helpers/minio.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { type S3Server, startS3rver } from '../../helpers/s3rver.ts';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { startRelay } from './mount-relay.ts';

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

function py(...args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile('python3', [OPS, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${args.join(' ')}: ${String(err)}\n${stdout}${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>);
    });
  });
}

const servers: [string, () => Promise<S3Server>][] = [
  ['s3rver', () => startS3rver({ buckets: ['data'] })],
  ['MinIO', () => startMinio({ buckets: ['data'] }) as Promise<S3Server>],
];

describe.runIf(fuse.ok)('mount: rename over an open file, and users’ .fuse_hidden names', () => {
  for (const [kind, start] of servers) {
    for (const extra of [[], ['--write-back']]) {
      const label = `${kind}, ${extra.join(' ') || 'default'}`;
      it(`mv onto an open file, same and across directories: the source's bytes, nothing hidden (${label})`, async () => {
        const server = await start();
        const m = await mountBucket(server, 'data', extra);
        const w = await sh(
          `cd '${m.dir}' && mkdir a b && printf S-same > a/S && printf T-old > a/T && printf S-across > a/S2 && mv a/S2 a/S2x && mkdir c && mv a/S2x c/S && printf T2-old > b/T`,
        );
        expect(w.code, w.out).toBe(0);
        const same = await py('over', m.dir, 'a', 'a');
        const across = await py('over', m.dir, 'c', 'b');
        expect(same).toEqual({ t_bytes: 'S-same', fd_bytes: 'T-rewritten', t_after_close: 'S-same' });
        expect(across).toEqual({ t_bytes: 'S-across', fd_bytes: 'T-rewritten', t_after_close: 'S-across' });
        expect(await keys(server, 'data')).toEqual(['a/', 'a/T', 'b/', 'b/T', 'c/']);
        expect(await body(server, 'data', 'a/T')).toBe('S-same');
        expect(await body(server, 'data', 'b/T')).toBe('S-across');
      });

      it(`hides in 6 directories at once, users renaming open files to hidden-form names (${label})`, async () => {
        const server = await start();
        const m = await mountBucket(server, 'data', extra);
        const n = 6;
        const mk = Array.from({ length: n }, (_, i) => `mkdir p${i} && printf O${i} > p${i}/O && printf U${i} > p${i}/U`);
        const w = await sh(`cd '${m.dir}' && ${mk.join(' && ')}`);
        expect(w.code, w.out).toBe(0);
        const seen = await py('user_hidden', m.dir, String(n));
        const want: string[] = [];
        for (let i = 0; i < n; i++) {
          expect(seen[i], `p${i}`).toEqual(['O-more', `U${i}`]);
          const name = `.fuse_hidden${(0xabc0 + i).toString(16).padStart(16, '0')}`;
          want.push(`p${i}/`, `p${i}/${name}`);
          // The user's file, under the name the user gave it, in the mount and the bucket.
          expect(await readFile(join(m.dir, `p${i}`, name), 'utf8')).toBe(`U${i}`);
          expect(await body(server, 'data', `p${i}/${name}`)).toBe(`U${i}`);
        }
        // Every removed O is gone; only the users' names are left.
        expect(await keys(server, 'data')).toEqual(want.sort());
      });
    }
  }

  for (const extra of [[], ['--write-back']]) {
    it(`hides, user renames and renames over open files in one directory from 8 threads (${extra.join(' ') || 'default'})`, async () => {
      const server = await startS3rver({ buckets: ['data'] });
      const m = await mountBucket(server, 'data', extra);
      const n = 8;
      const mk = Array.from({ length: n }, (_, i) => ['O', 'U', 'V', 'W'].map((f) => `printf ${f}${i} > one/${f}${i}`).join(' && '));
      const w = await sh(`cd '${m.dir}' && mkdir one && ${mk.join(' && ')}`);
      expect(w.code, w.out).toBe(0);
      const seen = await py('same_dir', m.dir, String(n));
      const want = ['one/'];
      for (let i = 0; i < n; i++) {
        expect(seen[i], `thread ${i}`).toEqual(['O-more', `U${i}`, `V${i}`]);
        const name = `.fuse_hidden${(0xbeef00 + i).toString(16).padStart(16, '0')}`;
        want.push(`one/${name}`, `one/V${i}`);
        expect(await body(server, 'data', `one/${name}`)).toBe(`U${i}`);
        expect(await body(server, 'data', `one/V${i}`)).toBe(`W${i}`);
      }
      // Nothing of the removed O<i> or the replaced V<i>; every user's file under its name.
      expect(await keys(server, 'data')).toEqual(want.sort());
    });
  }

  for (const extra of [[], ['--write-back']]) {
    it(`a removed open file keeps working after its directory is renamed (${extra.join(' ') || 'default'})`, async () => {
      const server = await startS3rver({ buckets: ['data'] });
      const m = await mountBucket(server, 'data', extra);
      const w = await sh(`cd '${m.dir}' && mkdir d && printf old > d/F && printf keep > d/K`);
      expect(w.code, w.out).toBe(0);
      const r = await py('dir_move', m.dir);
      // SEMANTICS "unlink.": through the removed file's descriptors reads, writes, close keep
      // working, fchmod succeeds; nothing of it is in the bucket.
      expect(r).toEqual({ fstat: 6, write: 6, read: 'before-after', fchmod: null, close: null, d2: ['K'] });
      expect(await keys(server, 'data')).toEqual(['d2/', 'd2/K']);
    });
  }

  it('a rename over an open file that the store refuses fails, and keeps the source and the target', async () => {
    const server = await startS3rver({ buckets: ['data'] });
    const relay = await startRelay(server);
    const m = await mountBucket(relay.server, 'data', ['--retries', '1']);
    const w = await sh(`printf source > '${m.dir}/S' && printf target > '${m.dir}/T' && printf target0 > '${m.dir}/T0'`);
    expect(w.code, w.out).toBe(0);
    // CopyObject is a PUT: the store refuses it; DELETEs and reads still pass.
    relay.mode = { kind: 'status', status: 403, method: 'PUT' };
    // The same rename over a file nobody has open is refused and changes nothing (holds today).
    const closed = await sh(`mv '${m.dir}/S' '${m.dir}/T0'; cat '${m.dir}/T0'`);
    expect(closed.out).toContain('target0');
    const r = await py('over_fails', m.dir);
    relay.mode = { kind: 'pass' };
    // rename(2) is all or nothing on a local file system. libfuse 2 hides an open target before
    // it asks for the rename; the mount, which may read the renaming process's system call here,
    // removes nothing at that hide, so the refused rename leaves both files as they were, also
    // for the open descriptor (docs/SEMANTICS.md, "unlink.").
    expect(r.rename).not.toBe('ok');
    expect(r).toMatchObject({ fd_bytes: 'target', s: 'source' });
    expect(await keys(server, 'data')).toEqual(['S', 'T', 'T0']);
    expect(await body(server, 'data', 'S')).toBe('source');
    expect(await body(server, 'data', 'T')).toBe('target');
  });

  it('refuses hard links with EPERM, also to a hidden-form name', async () => {
    const server = await startS3rver({ buckets: ['data'] });
    const m = await mountBucket(server, 'data');
    expect((await sh(`printf l > '${m.dir}/L'`)).code).toBe(0);
    expect(await py('link', m.dir)).toEqual({ link: 'Operation not permitted' });
    const l = await sh(`ln '${m.dir}/L' '${m.dir}/.fuse_hidden00000000000000ff' 2>&1; echo rc=$?`);
    expect(l.out).toMatch(/Operation not permitted[\s\S]*rc=1/);
    expect(await keys(server, 'data')).toEqual(['L']);
  });
});
