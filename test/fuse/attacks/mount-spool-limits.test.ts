// Part buffers come from WebAssembly memories (fuse/fs/aligned-buffer.ts), each reserving 8 GiB
// of address space; under an address-space limit (`ulimit -v`) they are plain buffers and the
// local copy goes through the page cache (docs/SEMANTICS.md, "write, everything else";
// docs/BENCHMARKING.md, "The local copy with direct I/O"). Expected: under limits of several
// sizes, and with --memory-limit 64 MiB (the least it takes), 1 GiB and 8 GiB, the mount starts, and a file written
// out of order through it (parts already sent, then a seek back) reaches the bucket byte for byte.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { fuseAvailable, serverEnv, sh } from '../mount-helpers.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { type S3Server, startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const BIN = new URL('../../../bin/estuary.js', import.meta.url).pathname;
const SCRIPT = new URL('./mount-spool-patterns.py', import.meta.url).pathname;
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

/** `estuary mount` under `ulimit -v kib` (none when undefined). */
async function mountLimited(server: S3Server, kib: number | undefined, extra: string[]): Promise<string> {
  const dir = await tempDir('estuary-mnt-');
  const cache = await tempDir('estuary-cache-');
  const argv = [BIN, 'mount', 'data', dir, '--endpoint', server.endpoint, '--log-format', 'json',
    '--cache-dir', cache, '--part-size', '5MiB', ...extra].map((a) => `'${a}'`).join(' ');
  const child = startChild('bash', ['-c', `${kib ? `ulimit -v ${kib}; ` : ''}exec '${NODE}' ${argv}`], {
    env: serverEnv(server),
  });
  onTeardown(async () => {
    if (await isMounted(dir)) await sh(`fusermount -uz '${dir}' || umount -l '${dir}'`);
    await child.stop('SIGKILL');
  });
  await child.waitFor(/"msg":"mounted /, 30_000).catch((err: unknown) => {
    throw new Error(`mount did not start: ${String(err)}\n${child.output()}`);
  });
  return dir;
}

async function writeOutOfOrder(server: S3Server, dir: string, name: string) {
  const refs = await tempDir('estuary-refs-');
  const r = await sh(`python3 '${SCRIPT}' '${dir}/${name}' '${refs}/${name}' seekback:4097`);
  expect(r.code, r.out).toBe(0);
  const want = await readFile(`${refs}/${name}`);
  const got = await s3Client(server)
    .send(new GetObjectCommand({ Bucket: 'data', Key: name }))
    .then(async (o) => Buffer.from(await o.Body!.transformToByteArray()));
  expect(got.length).toBe(want.length);
  expect(md5(got)).toBe(md5(want));
}

const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount: part buffers under address-space and memory limits', () => {
  for (const [kib, label] of [[2 * 2 ** 20, '2 GiB'], [6 * 2 ** 20, '6 GiB'], [40 * 2 ** 20, '40 GiB']] as const) {
    it(`ulimit -v ${label}: starts, and an out-of-order write arrives whole`, async () => {
      const server = await startS3rver({ buckets: ['data'] });
      const dir = await mountLimited(server, kib, ['--memory-limit', '256MiB']);
      await writeOutOfOrder(server, dir, 'f');
    }, 60_000);
  }
  for (const limit of ['64MiB', '1GiB', '8GiB']) {
    it(`--memory-limit ${limit}: an out-of-order write arrives whole`, async () => {
      const server = await startS3rver({ buckets: ['data'] });
      const dir = await mountLimited(server, undefined, ['--memory-limit', limit]);
      await writeOutOfOrder(server, dir, 'f');
    }, 60_000);
  }
});
