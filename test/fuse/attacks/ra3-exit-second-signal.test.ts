// SIGTERM while a large file is written over an existing object, then a second SIGTERM at several
// points (docs/SEMANTICS.md, "Mounting, unmounting, fstab": "a second signal exits at once";
// tenet 1: "Until then the bucket keeps what it held before: an overwritten file's old object
// stays whole and readable until the new content is complete ... whenever the mount dies").
//
// Each round: the object is the whole new file or the whole old one, never cut; the process exits
// at once on the second signal (130) and says so in its log; a lone SIGTERM lets the writer finish
// and the process exits 0 once the file is uploaded.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, Other, startDriver } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();
const SIZE = 48 * MiB;

describe.runIf(fuse.ok && minio.ok)('SIGTERM, then a second one, while a large file is written', () => {
  it('the object is the whole old or the whole new file at every point; exit status and log say what happened', { timeout: 300_000 }, async () => {
    const server = await startMinio({ buckets: ['ra3'] });
    const other = new Other(server, 'ra3');
    const src = `${await tempDir('estuary-ra3-src-')}/src`;
    const OLD = randomBytes(SIZE);
    const NEW = randomBytes(SIZE);
    await writeFile(src, NEW);
    const outcomes: string[] = [];
    // Milliseconds between the first and the second signal; undefined: no second signal.
    for (const gap of [0, 150, 400, 900, 2000, undefined]) {
      await other.put('f', OLD);
      const m = await mountBucket(server, 'ra3');
      const d = await startDriver();
      const { fd } = await d.cmd({ op: 'create', path: `${m.dir}/f` });
      const half = await d.cmd({ op: 'write', fd, src, from: 0, len: SIZE / 2 });
      expect(half.err).toBeUndefined();
      m.child.proc.kill('SIGTERM');
      await m.child.waitFor(/"msg":"stopping"/, 10_000);
      const rest = (async () => {
        const w = await d.cmd({ op: 'write', fd, src, from: SIZE / 2, len: SIZE / 2 });
        const c = await d.cmd({ op: 'close', fd });
        return `write ${w.err ?? 'ok'}, close ${c.err ?? 'ok'}`;
      })();
      if (gap !== undefined) {
        await sleep(gap);
        m.child.proc.kill('SIGTERM');
      }
      const exit = await Promise.race([m.child.exited, sleep(30_000).then(() => 'still running')]);
      const writer = await rest;
      const body = await other.s3
        .send(new GetObjectCommand({ Bucket: 'ra3', Key: 'f' }))
        .then(async (r) => Buffer.from(await r.Body!.transformToByteArray()));
      const stored = body.equals(OLD) ? 'old' : body.equals(NEW) ? 'new' : `CUT (${body.length} bytes)`;
      const said = /second signal/.test(m.child.output()) ? 'said second signal' : 'no word of a second signal';
      outcomes.push(`gap ${gap ?? 'none'}: exit ${exit}, ${said}, stored ${stored}, writer: ${writer}`);
    }
    const text = outcomes.join('\n');
    console.log(text);
    for (const o of outcomes) expect(o, text).not.toMatch(/CUT|still running/);
    // One signal: the writer finishes and its file is uploaded.
    expect(outcomes.at(-1), text).toMatch(/exit 0, .*stored new, writer: write ok, close ok/);
    // A second signal: 130, and the log says why.
    for (const o of outcomes.slice(0, -1)) if (!/exit 0/.test(o)) expect(o, text).toMatch(/exit 130, said second signal/);
  });
});
