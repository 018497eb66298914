// What goes wrong on purpose: bad input is refused before anything starts, a peer that fails is a
// failed column while the rest is measured, an interrupted run cleans up and keeps what it
// measured, and an emulated link is taken apart afterwards.

import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../helpers/cleanup.ts';
import { required } from '../helpers/services.ts';
import { tempDir } from '../helpers/tmp.ts';
import { mountsUnder, namespacesOf, onPath, readResults, runBench, startBench } from './helpers.ts';

describe('bad input', () => {
  it('an unknown scenario lists the ones present', async () => {
    const r = await runBench(['nonsense']);
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/unknown scenario "nonsense"; the scenarios available here are: fuse.*all/);
  });
  it('a malformed network profile says what is accepted', async () => {
    const r = await runBench(['fuse', '--network', '20ms']);
    expect(r.code).toBe(2);
    expect(r.output).toContain('invalid --network "20ms"');
    expect(r.output).not.toMatch(/\n\s+at /);
  });
  it('--endpoint without credentials is refused', async () => {
    const env = { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' };
    const r = await runBench(['fuse', '--endpoint', 'http://127.0.0.1:1'], env);
    expect(r.code).toBe(2);
    expect(r.output).toContain('AWS_ACCESS_KEY_ID');
  });
  it('an unknown --cases name lists the ones accepted', async () => {
    const r = await runBench(['fuse', '--cases', '10x100MB,2x500MB']);
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/--cases.*one of 1000x1MB, 100x10MB, 10x100MB, 1x1000MB, metadata/);
    expect(r.output).not.toMatch(/\n\s+at /);
  });
  it('an empty --cases is refused rather than measuring nothing', async () => {
    const r = await runBench(['fuse', '--cases', ',']);
    expect(r.code).toBe(2);
    expect(r.output).toContain('--cases names nothing to measure');
  });
  it('too little disk is refused before anything starts', async () => {
    const small = await tempDir('estuary-bench-small-');
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', small]);
    expect(m.status, String(m.stderr)).toBe(0);
    onTeardown(() => void spawnSync('umount', ['-l', small]));
    const out = join(await tempDir('estuary-bench-out-'), 'run');
    const r = await runBench(['fuse', '--quick', '--work-dir', small, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.output).toMatch(
      /not enough disk under .*: this run needs about [\d.]+ GiB but [\d.]+ GiB is free/,
    );
  });
});

const s3fs = required('s3fs', onPath('s3fs'), 'apt-get install s3fs');

describe.runIf(s3fs.ok)('trouble while measuring', () => {
  it('a peer that fails is a failed column with the reason; the others are measured', async () => {
    const fake = await tempDir('estuary-bench-fake-');
    await writeFile(
      join(fake, 'rclone'),
      '#!/bin/sh\nif [ "$1" = version ]; then echo "rclone v0.0-fake"; exit 0; fi\necho "fake rclone: mount refused" >&2\nexit 3\n',
    );
    await chmod(join(fake, 'rclone'), 0o755);
    const out = join(await tempDir('estuary-bench-out-'), 'run');
    const work = await tempDir('estuary-bench-work-');
    const env = { ...process.env, PATH: `${fake}:${process.env.PATH}` };
    const r = await runBench(
      ['fuse', '--quick', '--peers', 's3fs,rclone,estuary-rclone-buffers', '--out', out, '--work-dir', work],
      env,
    );
    expect(r.code, r.output).toBe(0);
    const fuse = (await readResults(out)).scenarios[0]!;
    const rclone = fuse.peers.find((p) => p.peer === 'rclone')!;
    expect(rclone.status).toBe('failed');
    expect(rclone.reason).toContain('fake rclone: mount refused');
    // Four datasets, each way, as speed, CPU and memory; and the metadata suite's six operations.
    expect(fuse.measurements.filter((m) => m.peer === 's3fs')).toHaveLength(4 * 2 * 3 + 6);
    // Named in --peers, the variant that runs only on request is measured like any peer.
    expect(fuse.measurements.filter((m) => m.peer === 'estuary-rclone-buffers')).toHaveLength(4 * 2 * 3 + 6);
    expect(await mountsUnder(work)).toEqual([]);
  }, 120_000);

  it('SIGINT stops the run, unmounts, and writes what was measured', async () => {
    const out = join(await tempDir('estuary-bench-out-'), 'run');
    const work = await tempDir('estuary-bench-work-');
    const child = startBench([
      'fuse',
      '--quick',
      '--peers',
      's3fs',
      '--runs',
      '5',
      '--out',
      out,
      '--work-dir',
      work,
    ]);
    await child.waitFor(/s3fs cp up 5×1MB: /, 60_000);
    child.proc.kill('SIGINT');
    expect(await child.exited).toBe(130);
    const results = await readResults(out);
    expect(results.interrupted).toBe(true);
    expect(results.scenarios[0]!.measurements.length).toBeGreaterThan(0);
    expect(await mountsUnder(work)).toEqual([]);
    expect(namespacesOf(child.pid)).toEqual([]);
  }, 120_000);

  it('without permission for namespaces it says so and measures on loopback', async () => {
    const fake = await tempDir('estuary-bench-fake-');
    await writeFile(
      join(fake, 'ip'),
      '#!/bin/sh\necho "mount --make-shared /run/netns failed: Operation not permitted" >&2\nexit 1\n',
    );
    await chmod(join(fake, 'ip'), 0o755);
    const out = join(await tempDir('estuary-bench-out-'), 'run');
    const env = { ...process.env, PATH: `${fake}:${process.env.PATH}` };
    const r = await runBench(
      ['fuse', '--quick', '--peers', 's3fs', '--network', 'site-cloud', '--cases', '1x1000MB', '--out', out],
      env,
    );
    expect(r.code, r.output).toBe(0);
    const fuse = (await readResults(out)).scenarios[0]!;
    // --cases: only the one-big-file row (1×10MB in quick mode), and no metadata suite; beside
    // each copy, what the mount process cost, and the CPU of the SDK alone (it has no process of
    // its own, so no memory row).
    expect(new Set(fuse.measurements.map((m) => m.case))).toEqual(
      new Set(['up', 'down'].flatMap((d) => [`cp ${d} 1×10MB`, `cpu ${d} 1×10MB`, `rss ${d} 1×10MB`])),
    );
    const cost = fuse.measurements.filter((m) => !m.case.startsWith('cp '));
    expect(new Set(cost.map((m) => m.peer))).toEqual(new Set(['s3fs', 'sdk-alone']));
    expect(cost.filter((m) => m.peer === 'sdk-alone').every((m) => m.case.startsWith('cpu '))).toBe(true);
    // CPU is read in clock ticks (10 ms): a 10 MB copy by s3fs may cost less than one, so a CPU
    // row may be 0, never negative or missing; memory is always there.
    for (const m of cost) {
      expect(Number.isFinite(m.summary.median)).toBe(true);
      if (m.case.startsWith('rss ')) expect(m.summary.median).toBeGreaterThan(0);
      else expect(m.summary.median).toBeGreaterThanOrEqual(0);
    }
    expect(fuse.notes.join(' ')).toMatch(
      /network site-cloud could not be emulated \(.*Operation not permitted\); fell back to --network local/,
    );
    expect(String(fuse.settings.link)).toMatch(/^local/);
  }, 120_000);

  it('an emulated link slows the copies and is removed afterwards', async () => {
    const out = join(await tempDir('estuary-bench-out-'), 'run');
    const work = await tempDir('estuary-bench-work-');
    const child = startBench([
      'fuse',
      '--quick',
      '--peers',
      's3fs',
      '--network',
      '10ms,200mbit',
      '--out',
      out,
      '--work-dir',
      work,
    ]);
    const code = await child.exited;
    expect(code, child.output()).toBe(0);
    const fuse = (await readResults(out)).scenarios[0]!;
    const link = String(fuse.settings.link);
    if (link.startsWith('local')) {
      // No namespaces here: the fallback must be explained, never silent.
      expect(fuse.notes.join(' ')).toContain('fell back to --network local');
    } else {
      expect(link).toContain('10ms RTT, 200mbit');
      const ttfb = fuse.measurements.find((m) => m.peer === 's3fs' && m.case === 'time to first byte')!;
      // Opening and reading one byte takes at least a HEAD and a GET: two round trips.
      expect(ttfb.summary.median).toBeGreaterThan(0.02);
    }
    expect(namespacesOf(child.pid)).toEqual([]);
    expect(spawnSync('ip', ['link', 'show', `eb${child.pid}h`]).status).not.toBe(0);
  }, 120_000);
});
