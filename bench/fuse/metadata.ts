// The goofys-style metadata suite on a fresh mount: `ls -l` of a flat directory, `find` over a
// tree and time to first byte of a large object (all cold: the mount has just started and the
// kernel caches were dropped), then create files one after another, create them all at once, and
// unlink them. Each step is checked (entry counts, the first byte) so a fast wrong answer fails.

import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { lastLine, runCommand } from '../proc.ts';
import { CONCURRENCY, inParallel, putFile, putSmall } from '../s3.ts';
import type { MetadataSizes } from './datasets.ts';

export const META_PREFIX = 'meta';

export interface MetadataFixture {
  readonly firstByte: number;
}

export function metadataCases(m: MetadataSizes): Record<string, string> {
  return {
    ls: `ls -l ${m.listFiles} files`,
    find: `find ${m.treeDirs * (m.treeFilesPerDir + 1) + 1} entries`,
    ttfb: 'time to first byte',
    create: `create ${m.createSerial} files`,
    createParallel: `create ${m.createParallel} in parallel`,
    unlink: `unlink ${m.unlink} files`,
  };
}

/** Seeds the objects the read-side steps look at, with directory markers for every directory. */
export async function seedMetadata(
  s3: S3Client,
  bucket: string,
  m: MetadataSizes,
  bigFile: { path: string; bytes: number; firstByte: number },
): Promise<MetadataFixture> {
  const one = Buffer.from('x');
  const empty = Buffer.alloc(0);
  const keys: [string, Buffer][] = [
    [`${META_PREFIX}/`, empty],
    [`${META_PREFIX}/ls/`, empty],
    [`${META_PREFIX}/tree/`, empty],
  ];
  for (let i = 0; i < m.listFiles; i++) keys.push([`${META_PREFIX}/ls/f${i}`, one]);
  for (let d = 0; d < m.treeDirs; d++) {
    keys.push([`${META_PREFIX}/tree/d${d}/`, empty]);
    for (let f = 0; f < m.treeFilesPerDir; f++) keys.push([`${META_PREFIX}/tree/d${d}/f${f}`, one]);
  }
  keys.push([`${META_PREFIX}/ttfb/`, empty]);
  await inParallel(keys, CONCURRENCY, ([k, body]) => putSmall(s3, bucket, k, body));
  await putFile(s3, bucket, `${META_PREFIX}/ttfb/big`, bigFile.path, bigFile.bytes);
  return { firstByte: bigFile.firstByte };
}

async function timedShell(script: string, check?: (out: string) => string | undefined): Promise<number> {
  const t0 = performance.now();
  const r = await runCommand('sh', ['-c', script]);
  const s = (performance.now() - t0) / 1000;
  if (r.code !== 0) throw new Error(`${script.slice(0, 40)}…: ${lastLine(r.output) || `exit ${r.code}`}`);
  const problem = check?.(r.output);
  if (problem) throw new Error(problem);
  return s;
}

function q(path: string): string {
  return `'${path.replace(/'/g, `'\\''`)}'`;
}

function lineCount(expected: number, what: string): (out: string) => string | undefined {
  return (out) => {
    const n = out.split('\n').filter((l) => l !== '' && !l.startsWith('total')).length;
    return n === expected ? undefined : `${what} saw ${n} entries, expected ${expected}`;
  };
}

/** One pass of the suite on `mnt`; `scratch` is a directory name unique to this peer and run. */
export async function runMetadataSuite(
  mnt: string,
  scratch: string,
  m: MetadataSizes,
  fixture: MetadataFixture,
  record: (step: keyof ReturnType<typeof metadataCases>, seconds: number) => void,
): Promise<void> {
  const base = join(mnt, META_PREFIX);
  record('ls', await timedShell(`ls -l ${q(join(base, 'ls'))}`, lineCount(m.listFiles, 'ls -l')));
  const entries = m.treeDirs * (m.treeFilesPerDir + 1) + 1;
  record('find', await timedShell(`find ${q(join(base, 'tree'))}`, lineCount(entries, 'find')));
  const t0 = performance.now();
  const fh = await open(join(base, 'ttfb', 'big'), 'r');
  const { bytesRead, buffer } = await fh.read(Buffer.alloc(1), 0, 1, 0);
  const ttfb = (performance.now() - t0) / 1000;
  await fh.close();
  if (bytesRead !== 1 || buffer[0] !== fixture.firstByte) throw new Error('first byte read back wrong');
  record('ttfb', ttfb);
  const dir = q(join(mnt, scratch));
  const par = q(join(mnt, `${scratch}-par`));
  await timedShell(`mkdir ${dir} ${par}`);
  record(
    'create',
    await timedShell(`i=0; while [ $i -lt ${m.createSerial} ]; do : > ${dir}/f$i; i=$((i+1)); done`),
  );
  record(
    'createParallel',
    await timedShell(`i=0; while [ $i -lt ${m.createParallel} ]; do : > ${par}/f$i & i=$((i+1)); done; wait`),
  );
  await timedShell(`ls ${par}`, lineCount(m.createParallel, 'parallel create'));
  const victims = Array.from({ length: Math.min(m.unlink, m.createSerial) }, (_, i) => `${dir}/f${i}`).join(
    ' ',
  );
  record('unlink', await timedShell(`rm ${victims}`));
}
