// `estuary stage` against OpenStack Swift's S3 API, the second real store: a round trip with a
// multipart upload, a skip, and a download killed with SIGTERM and resumed with a range request
// and If-Match, which Swift honours (s3rver ignores it).

import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../helpers/cleanup.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { startSwift, swiftAvailable } from '../helpers/swift.ts';
import { tempDir } from '../helpers/tmp.ts';

afterAll(runTeardowns);

const MiB = 2 ** 20;
const ROOT = new URL('../../', import.meta.url).pathname;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const swift = await swiftAvailable();

describe.runIf(swift.ok)('estuary stage against Swift', () => {
  it('uploads, skips, downloads, and resumes an interrupted download', async () => {
    const server = await startSwift({ buckets: ['stage'] });
    const env = { ...process.env, AWS_ACCESS_KEY_ID: server.accessKeyId, AWS_SECRET_ACCESS_KEY: server.secretAccessKey };
    const state = await tempDir('estuary-stage-swift-state-');
    const stage = (args: string[]) =>
      startChild(NODE, ['bin/estuary.js', 'stage', ...args, '--endpoint', server.endpoint, '--state-dir', state, '--part-size', '5MiB', '--log-format', 'json'], { cwd: ROOT, env });
    const run = async (args: string[]) => {
      const c = stage(args);
      const code = await c.exited;
      const line = c.output().split('\n').find((l) => l.startsWith('{"direction"'));
      return { code, out: c.output(), summary: line ? (JSON.parse(line) as Record<string, unknown>) : undefined };
    };
    const src = await tempDir('estuary-stage-swift-src-');
    const files: Record<string, Buffer> = { 'a/small.bin': randomBytes(1000), 'big.bin': randomBytes(24 * MiB + 7) };
    for (const [rel, data] of Object.entries(files)) {
      await mkdir(join(src, rel, '..'), { recursive: true });
      await writeFile(join(src, rel), data);
    }
    const up = await run(['out', src, 's3://stage/run/']);
    expect(up.code, up.out).toBe(0);
    expect(up.summary).toMatchObject({ copied: 2 });
    expect((await run(['out', src, 's3://stage/run/'])).summary).toMatchObject({ copied: 0, skipped: 2 });

    const dst = await tempDir('estuary-stage-swift-dst-');
    const child = stage(['in', 's3://stage/run/', dst, '--parallel', '1']);
    const partial = async () => (await readdir(dst).catch(() => [])).find((f) => f.startsWith('big.bin.') && f.endsWith('.estuary-partial'));
    for (let i = 0; i < 1000; i++) {
      const p = await partial();
      if (p && ((await stat(join(dst, p)).catch(() => undefined))?.size ?? 0) > MiB) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await child.stop('SIGTERM'), child.output()).toBe(143);
    const resumed = await run(['in', 's3://stage/run/', dst]);
    expect(resumed.code, resumed.out).toBe(0);
    for (const [rel, data] of Object.entries(files)) expect(sha(await readFile(join(dst, rel))), rel).toBe(sha(data));
    expect(await partial()).toBeUndefined();
    expect(resumed.summary!.resumedBytes as number).toBeGreaterThan(MiB);
  });
});
