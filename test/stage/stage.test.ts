// `estuary stage` as a user runs it (a real process) against a real S3 server (s3rver), directly
// and through a gateway with an issued credential: round trips, skipping what is identical,
// kill -9 in the middle of an upload and of a download followed by a resume, and bad input.

import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../helpers/cleanup.ts';
import { issue } from '../../gateway/s3/credentials.ts';
import { NODE, startChild } from '../helpers/process.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { startTestGateway } from '../gateway/helpers/gateway.ts';

const MiB = 2 ** 20;
const ROOT = new URL('../../', import.meta.url).pathname;

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('estuary stage', async () => {
  const store = await startS3rver({ buckets: ['kek-data'] });
  const stateDir = await tempDir('estuary-stage-state-');
  const env = { ...process.env, AWS_ACCESS_KEY_ID: store.accessKeyId, AWS_SECRET_ACCESS_KEY: store.secretAccessKey };
  const stage = (args: string[], extraEnv: NodeJS.ProcessEnv = env) => {
    const all = ['bin/estuary.js', 'stage', ...args, '--part-size', '5MiB', '--log-format', 'json'];
    if (!args.includes('--state-dir')) all.push('--state-dir', stateDir);
    if (!args.includes('--endpoint')) all.push('--endpoint', store.endpoint);
    return startChild(NODE, all, { cwd: ROOT, env: extraEnv });
  };
  const journalParts = async (dir: string) => {
    const j = (await readdir(dir).catch(() => [])).filter((f) => f.endsWith('.json'));
    const n = await Promise.all(j.map(async (f) => (await readFile(join(dir, f), 'utf8').catch(() => '')).match(/"\d+":"/g)?.length ?? 0));
    return Math.max(0, ...n) >= 2;
  };
  const run = async (args: string[], extraEnv?: NodeJS.ProcessEnv) => {
    const child = stage(args, extraEnv);
    const code = await child.exited;
    const last = child.output().trim().split('\n').filter((l) => l.startsWith('{"direction"')).at(-1);
    return { code, out: child.output(), summary: last ? (JSON.parse(last) as Record<string, number>) : undefined };
  };

  const src = await tempDir('estuary-stage-src-');
  const files: Record<string, Buffer> = {
    'empty.txt': Buffer.alloc(0),
    'a/small.bin': randomBytes(1000),
    'a/b/multi.bin': randomBytes(12 * MiB + 123),
  };
  for (const [rel, data] of Object.entries(files)) {
    await mkdir(join(src, rel, '..'), { recursive: true });
    await writeFile(join(src, rel), data);
  }

  it('uploads a tree, skips it when identical, and sends only what changed', async () => {
    const first = await run(['out', src, 's3://kek-data/run1/']);
    expect(first.code, first.out).toBe(0);
    expect(first.summary).toMatchObject({ copied: 3, skipped: 0 });
    const again = await run(['out', src, 's3://kek-data/run1/']);
    expect(again.summary).toMatchObject({ copied: 0, skipped: 3 });
    await writeFile(join(src, 'a/small.bin'), randomBytes(1000));
    files['a/small.bin'] = await readFile(join(src, 'a/small.bin'));
    const changed = await run(['out', src, 's3://kek-data/run1/']);
    expect(changed.summary).toMatchObject({ copied: 1, skipped: 2 });
  });

  it('downloads the tree byte for byte, and skips it the second time', async () => {
    const dst = await tempDir('estuary-stage-dst-');
    const r = await run(['in', 's3://kek-data/run1/', dst]);
    expect(r.code, r.out).toBe(0);
    for (const [rel, data] of Object.entries(files)) expect(sha(await readFile(join(dst, rel))), rel).toBe(sha(data));
    expect((await run(['sync', 's3://kek-data/run1/', dst])).summary).toMatchObject({ copied: 0, skipped: 3 });
  });

  it('resumes an upload killed with kill -9 without sending finished parts again', async () => {
    const big = await tempDir('estuary-stage-big-');
    const data = randomBytes(40 * MiB);
    await writeFile(join(big, 'big.bin'), data);
    const child = stage(['out', big, 's3://kek-data/run2/', '--part-parallel', '1']);
    // Kill once the journal records two acknowledged parts.
    for (let i = 0; i < 400; i++) {
      const j = (await readdir(stateDir).catch(() => [])).filter((f) => f.endsWith('.json'));
      const parts = await Promise.all(j.map(async (f) => (await readFile(join(stateDir, f), 'utf8').catch(() => '')).match(/"\d+":"/g)?.length ?? 0));
      if (Math.max(0, ...parts) >= 2) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await child.stop('SIGKILL');
    const resumed = await run(['out', big, 's3://kek-data/run2/']);
    expect(resumed.code, resumed.out).toBe(0);
    expect(resumed.summary!.resumedParts).toBeGreaterThanOrEqual(2);
    const back = await tempDir('estuary-stage-back-');
    expect((await run(['in', 's3://kek-data/run2/', back])).code).toBe(0);
    expect(sha(await readFile(join(back, 'big.bin')))).toBe(sha(data));
  });

  it('resumes a download killed with kill -9 from its partial file, and leaves no partial behind', async () => {
    const dst = await tempDir('estuary-stage-dl-');
    const child = stage(['in', 's3://kek-data/run2/', dst]);
    const partialOf = async () => (await readdir(dst).catch(() => [])).find((f) => /^big\.bin\.[0-9a-f]+\.estuary-partial$/.test(f));
    for (let i = 0; i < 400; i++) {
      const p = await partialOf();
      if (p && ((await stat(join(dst, p)).catch(() => undefined))?.size ?? 0) > 4 * MiB) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await child.stop('SIGKILL');
    expect(existsSync(join(dst, 'big.bin'))).toBe(false);
    const r = await run(['in', 's3://kek-data/run2/', dst]);
    expect(r.code, r.out).toBe(0);
    expect(r.summary!.copied).toBe(1);
    expect(r.summary!.resumedBytes).toBeGreaterThan(0);
    expect(await partialOf()).toBeUndefined();
    expect((await stat(join(dst, 'big.bin'))).size).toBe(40 * MiB);
  });

  it('works through a gateway with an issued credential file', async () => {
    const dir = await tempDir('estuary-stage-gw-');
    const key = 'stage-issuer-key-0123456789abcdef0123456789';
    await writeFile(join(dir, 'issuer.key'), key);
    await writeFile(join(dir, 'keys.json'), JSON.stringify({ default: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey } }));
    const gw = await startTestGateway({ s3: [`kek-data=${store.endpoint}`], s3IssuerKeyFile: join(dir, 'issuer.key'), s3Credentials: join(dir, 'keys.json') });
    const c = issue(key, [{ bucket: 'kek-data', prefix: 'via-gw/', write: true }], 3_600_000, Date.now());
    await writeFile(join(dir, 'cred.json'), JSON.stringify({ Version: 1, AccessKeyId: c.accessKeyId, SecretAccessKey: c.secretAccessKey, SessionToken: c.sessionToken }));
    const noKeys = { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' };
    const up = await run(['out', src, 's3://kek-data/via-gw/', '--endpoint', gw.url, '--credentials', join(dir, 'cred.json')], noKeys);
    expect(up.code, up.out).toBe(0);
    expect(up.summary).toMatchObject({ copied: 3 });
    const dst = await tempDir('estuary-stage-gwdst-');
    const down = await run(['in', 's3://kek-data/via-gw/', dst, '--endpoint', gw.url, '--credentials', join(dir, 'cred.json')], noKeys);
    expect(down.code, down.out).toBe(0);
    expect(sha(await readFile(join(dst, 'a/b/multi.bin')))).toBe(sha(files['a/b/multi.bin']!));
    const denied = await run(['out', src, 's3://kek-data/elsewhere/', '--endpoint', gw.url, '--credentials', join(dir, 'cred.json')], noKeys);
    // The listing is answered (filtered to the credential's prefix); every upload is refused.
    expect(denied.code).toBe(1);
    expect(denied.summary).toMatchObject({ copied: 0 });
    expect(denied.out).toMatch(/does not allow writing kek-data\/elsewhere/);
  });

  it('fails a file whose part or body arrived altered at the store, and a file changed during its upload', async () => {
    const { startCountingProxy } = await import('../helpers/counting-proxy.ts');
    const relay = await startCountingProxy(store.endpoint);
    relay.alter = (r) => r.method === 'PUT' && (r.path.includes('partNumber=2') || r.path.includes('small.bin'));
    const r = await run(['out', src, 's3://kek-data/altered/', '--endpoint', relay.url]);
    expect(r.code, r.out).toBe(1);
    const failed = (r.summary as unknown as { failed: { rel: string; error: string }[] }).failed;
    expect(failed.map((f) => f.rel).sort()).toEqual(['a/b/multi.bin', 'a/small.bin']);
    expect(failed.find((f) => f.rel === 'a/small.bin')!.error).toMatch(/arrived altered/);
    expect(failed.find((f) => f.rel === 'a/b/multi.bin')!.error).toMatch(/part 2 arrived altered/);

    relay.alter = undefined;
    const dir = await tempDir('estuary-stage-changing-');
    await writeFile(join(dir, 'f.bin'), randomBytes(3 * MiB));
    await writeFile(join(dir, 'g.bin'), randomBytes(3 * MiB));
    // While their bodies are on the way, one file is rewritten in place, the other truncated.
    relay.before = async (seen) => {
      if (seen.method !== 'PUT') return;
      if (seen.path.includes('f.bin')) await writeFile(join(dir, 'f.bin'), randomBytes(3 * MiB), { flag: 'r+' });
      else await writeFile(join(dir, 'g.bin'), randomBytes(1000));
    };
    const changed = await run(['out', dir, 's3://kek-data/changing/', '--endpoint', relay.url]);
    relay.before = undefined;
    expect(changed.code, changed.out).toBe(1);
    const why = (changed.summary as unknown as { failed: { rel: string; error: string }[] }).failed;
    expect(why.map((f) => f.rel).sort()).toEqual(['f.bin', 'g.bin']);
    for (const f of why) expect(f.error).toMatch(/changed while it was being uploaded/);
  });

  it('stops on Ctrl-C through npx: parts in flight saved, one line, exit 130; the rerun resumes and says so', async () => {
    const dir = await tempDir('estuary-stage-sigint-');
    const data = randomBytes(40 * MiB);
    await writeFile(join(dir, 'big.bin'), data);
    for (let i = 0; i < 5; i++) await writeFile(join(dir, `z${i}.txt`), randomBytes(100));
    const sigState = await tempDir('estuary-stage-sigstate-');
    // As a terminal does: the signal goes to the whole process group (npx, its shell and estuary).
    const args = ['estuary', 'stage', 'out', dir, 's3://kek-data/sigint/', '--endpoint', store.endpoint, '--state-dir', sigState,
      '--part-size', '5MiB', '--part-parallel', '1', '--parallel', '1', '--log-format', 'json'];
    const npx = spawn('npx', args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    onTeardown(() => {
      try {
        process.kill(-npx.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    });
    let out = '';
    npx.stdout.on('data', (d: Buffer) => (out += d.toString()));
    npx.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<[number | null, string | null]>((r) => npx.once('close', (code, signal) => r([code, signal])));
    for (let i = 0; i < 600 && !(await journalParts(sigState)); i++) await new Promise((r) => setTimeout(r, 25));
    process.kill(-npx.pid!, 'SIGINT');
    const [code, signal] = await exited;
    // npm re-raises the signal on itself, so a shell sees 130 either way.
    expect(code === 130 || signal === 'SIGINT', `${code} ${signal}\n${out}`).toBe(true);
    const line = out.split('\n').filter((l) => l.includes('interrupted:'));
    expect(line, out).toHaveLength(1);
    expect(line[0]).toMatch(/^estuary: interrupted: 0 of 6 files done, (\d+) parts? of big\.bin saved; run the same command to resume$/);
    const saved = Number(/(\d+) parts? of big/.exec(line[0]!)![1]);
    expect(saved).toBeGreaterThanOrEqual(1);
    expect(out).not.toMatch(/SIGINT again/);

    const again = await run(['out', dir, 's3://kek-data/sigint/', '--state-dir', sigState]);
    expect(again.code, again.out).toBe(0);
    expect(again.summary).toMatchObject({ copied: 6, resumedParts: saved });
    expect(again.out).toMatch(new RegExp(`"file":"big.bin","resumed":"${saved} of 8 parts already sent"`));
  });

  it('checkpoints a download at once on SIGTERM (exit 143), and the rerun continues from the partial file', async () => {
    const dst = await tempDir('estuary-stage-sigterm-');
    const child = stage(['in', 's3://kek-data/sigint/', dst, '--parallel', '1', '--shutdown-timeout', '60s']);
    const partialOf = async () => (await readdir(dst).catch(() => [])).find((f) => /^big\.bin\..*\.estuary-partial$/.test(f));
    for (let i = 0; i < 600; i++) {
      const p = await partialOf();
      if (p && ((await stat(join(dst, p)).catch(() => undefined))?.size ?? 0) > 2 * MiB) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const started = performance.now();
    const code = await child.stop('SIGTERM');
    expect(code, child.output()).toBe(143);
    // Not the 60 s deadline: a large download stops at once, its partial file kept for the rerun.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(child.output()).toMatch(/estuary: interrupted: 0 of 6 files done, [\d.]+ MiB of big\.bin saved; run the same command to resume/);
    expect(await partialOf()).toBeDefined();
    expect(existsSync(join(dst, 'big.bin'))).toBe(false);
    const r = await run(['in', 's3://kek-data/sigint/', dst]);
    expect(r.code, r.out).toBe(0);
    expect(r.summary!.resumedBytes).toBeGreaterThan(2 * MiB);
    expect(r.out).toMatch(/"file":"big.bin","resumed":"[\d.]+ MiB already downloaded"/);
    expect(await partialOf()).toBeUndefined();
  });

  it('says so when the prefix holds no objects (exit 2), and when the source directory holds no files', async () => {
    const dst = await tempDir('estuary-stage-empty-');
    const r = await run(['in', 's3://kek-data/no-such-prefix/', join(dst, 'new')]);
    expect(r.code).toBe(2);
    expect(r.out.trim()).toBe('estuary: no objects under s3://kek-data/no-such-prefix/ — check the prefix');
    expect(existsSync(join(dst, 'new'))).toBe(false); // not left behind
    const out = await run(['out', dst, 's3://kek-data/from-empty/']);
    expect(out.code).toBe(2);
    expect(out.out.trim()).toBe(`estuary: no files under ${dst} — check the path`);
  });

  it('uploads a tree with a symlink loop in it once, without recursing into the loop', async () => {
    const dir = await tempDir('estuary-stage-loop-');
    await mkdir(join(dir, 'd'));
    await writeFile(join(dir, 'd', 'f.txt'), 'once');
    await symlink('..', join(dir, 'd', 'up'));
    const r = await run(['out', dir, 's3://kek-data/loop/']);
    expect(r.code, r.out).toBe(0);
    expect(r.summary).toMatchObject({ copied: 1 });
  });

  it('refuses bad arguments in one line with exit status 2', async () => {
    const r = await run(['out', '/nonexistent/dir', 's3://kek-data/x/']);
    expect(r.code).toBe(2);
    expect(r.out.trim().split('\n')).toHaveLength(1);
    expect(r.out).toMatch(/cannot read \/nonexistent\/dir/);
    const both = await run(['sync', 's3://kek-data/a/', 's3://kek-data/b/']);
    expect(both.code).toBe(2);
    expect(both.out).toMatch(/one side must be a local directory/);
    const file = join(await tempDir('estuary-stage-notdir-'), 'file');
    await writeFile(file, 'x');
    const notDir = await run(['in', 's3://kek-data/run1/', join(file, 'sub')]);
    expect(notDir.code).toBe(2);
    expect(notDir.out.trim()).toBe(`estuary: cannot write to ${join(file, 'sub')} (ENOTDIR); check the path and its permissions`);
    const short = await run(['out', '/tmp', 's3://b/x/']);
    expect(short.code).toBe(2);
    expect(short.out).toMatch(/s3:\/\/b\/x\/ is not s3:\/\/BUCKET\/PREFIX \(a bucket name is 3 to 63/);
  });
});
