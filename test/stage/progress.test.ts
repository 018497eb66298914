// What `estuary stage` shows a person: the progress line redrawn on a terminal, the closing
// summary and the line after an interruption (stage/progress.ts, pure), and the same seen through
// a real pseudo-terminal (`script` from util-linux) against s3rver.

import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatBytes, formatSeconds, interruptedLine, renderLine, renderSummary } from '../../stage/progress.ts';
import { newSummary } from '../../stage/transfer.ts';
import { startChild } from '../helpers/process.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';

const MiB = 2 ** 20;
const ROOT = new URL('../../', import.meta.url).pathname;

describe('rendering', () => {
  it('shows bytes and files done of the total, rate and time left, in the words of the summary', () => {
    const line = renderLine({ moved: 10 * MiB, spared: 2 * MiB, files: { copied: 2, skipped: 1, failed: 0 }, listed: { files: 10, bytes: 40 * MiB, complete: true }, seconds: 5 });
    expect(line).toBe('12.0 MiB / 40.0 MiB, 30%, 2.00 MiB/s, ETA 0:14 · files 3 / 10 (2 copied, 1 skipped, 0 failed)');
  });

  it('marks totals still growing while the listing streams in, and has no ETA then', () => {
    const line = renderLine({ moved: 0, spared: 0, files: { copied: 0, skipped: 0, failed: 0 }, listed: { files: 2000, bytes: 3 * 2 ** 30, complete: false }, seconds: 1 });
    expect(line).toBe('0 B / ≥3.00 GiB, 0%, 0 B/s, ETA - · files 0 / ≥2000 (0 copied, 0 skipped, 0 failed)');
    expect(renderLine({ moved: 0, spared: 0, files: { copied: 0, skipped: 0, failed: 0 }, listed: { files: 1, bytes: 1, complete: true }, seconds: 1 }, 30)).toHaveLength(29);
  });

  it('formats sizes and durations', () => {
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(150 * MiB)).toBe('150.0 MiB');
    expect(formatSeconds(59.6)).toBe('1:00');
    expect(formatSeconds(3725)).toBe('1:02:05');
  });

  it('sums up for a person, and says what an interruption saved', () => {
    const s = newSummary();
    Object.assign(s, { copied: 3, skipped: 2, bytes: 12 * MiB, resumedParts: 2, resumedBytes: 10 * MiB });
    s.failed.push({ rel: 'a/b', error: 'no data for 30 s' });
    expect(renderSummary(s, 6)).toBe(
      'copied 3 files (12.0 MiB), skipped 2, failed 1 in 0:06 (2.0 MiB/s)\nresumed from an earlier run: 2 parts, 10.0 MiB\nfailed: a/b: no data for 30 s\n',
    );
    const i = newSummary();
    Object.assign(i, { copied: 200, skipped: 12, listed: { files: 301, bytes: 0, complete: true } });
    i.interrupted.push({ rel: 'big.bin', saved: '4 parts' }, { rel: 'small', saved: 'nothing' });
    expect(interruptedLine(i)).toBe('interrupted: 212 of 301 files done, 4 parts of big.bin saved; run the same command to resume');
  });
});

describe('on a terminal', async () => {
  const store = await startS3rver({ buckets: ['tty'] });
  const env = { ...process.env, AWS_ACCESS_KEY_ID: store.accessKeyId, AWS_SECRET_ACCESS_KEY: store.secretAccessKey, TERM: 'xterm', COLUMNS: '160' };
  const src = await tempDir('estuary-progress-src-');
  await mkdir(join(src, 'd'));
  for (let i = 0; i < 3; i++) await writeFile(join(src, 'd', `f${i}.bin`), randomBytes(2 * MiB));
  const state = await tempDir('estuary-progress-state-');
  // `script` gives the command a pseudo-terminal for stdout and stderr, as an interactive shell would.
  const onTty = async (args: string) => {
    const cmd = `${process.execPath} bin/estuary.js stage ${args} --endpoint ${store.endpoint} --state-dir ${state}`;
    const child = startChild('script', ['-qefc', cmd, '/dev/null'], { cwd: ROOT, env });
    return { code: await child.exited, out: child.output() };
  };

  it('redraws one progress line in place and ends with a summary for a person; --json keeps the JSON', async () => {
    const up = await onTty(`out ${src} s3://tty/run/`);
    expect(up.code, up.out).toBe(0);
    expect(up.out).toMatch(/\r6\.00 MiB \/ 6\.00 MiB, 100%, [\d.]+ \S+\/s, ETA 0:00 · files 3 \/ 3 \(3 copied, 0 skipped, 0 failed\)\x1b\[K/);
    expect(up.out).toMatch(/copied 3 files \(6\.00 MiB\), skipped 0, failed 0 in \d+:\d\d/);
    expect(up.out).not.toMatch(/"direction"/);
    const again = await onTty(`out ${src} s3://tty/run/ --json`);
    expect(again.code, again.out).toBe(0);
    expect(again.out).toMatch(/files 3 \/ 3 \(0 copied, 3 skipped, 0 failed\)/);
    expect(again.out).toMatch(/\{"direction":"out".*"copied":0,"skipped":3/);
    // An error on a terminal is its one line, with no progress line drawn before it.
    const empty = await onTty(`in s3://tty/none/ ${join(src, 'none')}`);
    expect(empty.code).toBe(2);
    expect(empty.out.trim()).toBe('estuary: no objects under s3://tty/none/ — check the prefix');
  });
});
