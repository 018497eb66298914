import { describe, expect, it } from 'vitest';
import { LiveDisplay, liveTable, progressBar, stepOf } from '../../bench/live.ts';

const sample = (peer: string, c: string, value: number) => ({
  case: c,
  peer,
  metric: 'transferRate' as const,
  value,
});

describe('live table', () => {
  it('shows the median so far per case and peer', () => {
    const lines = liveTable(
      [
        sample('s3fs', 'cp up 1×1000MB', 10),
        sample('s3fs', 'cp up 1×1000MB', 30),
        sample('rclone', 'cp up 1×1000MB', 5),
      ],
      10,
    );
    expect(lines[0]).toMatch(/^case\s+s3fs\s+rclone$/);
    expect(lines[1]).toMatch(/^cp up 1×1000MB \(MB\/s\)\s+20\.0\s+5\.00$/);
  });
  it('is empty before the first sample', () => {
    expect(liveTable([], 10)).toEqual([]);
  });
});

describe('progress', () => {
  it('finds the step count a scenario puts in front of its line', () => {
    expect(stepOf('(3/12) s3fs: cp up')).toEqual([3, 12]);
    expect(stepOf('writing dataset')).toBeUndefined();
  });
  it('draws a bar', () => {
    expect(progressBar(1, 4, 8)).toBe('[##......] 25%');
  });
});

describe('LiveDisplay', () => {
  it('writes plain lines when stdout is not a terminal', () => {
    let text = '';
    const d = new LiveDisplay({
      isTTY: false,
      columns: 80,
      write: (t) => {
        text += t;
      },
    });
    d.startScenario('fuse');
    d.progress('(1/2) s3fs: cp up 1×1000MB');
    d.sample(sample('s3fs', 'cp up 1×1000MB', 12.3));
    d.finishScenario('fuse: done');
    expect(text).toBe(
      '== fuse\nfuse: (1/2) s3fs: cp up 1×1000MB\nfuse: s3fs cp up 1×1000MB: 12.3 MB/s\nfuse: done\n',
    );
    expect(text).not.toContain('\x1b');
  });
  it('redraws in place on a terminal', () => {
    let text = '';
    const d = new LiveDisplay({
      isTTY: true,
      columns: 80,
      write: (t) => {
        text += t;
      },
    });
    d.startScenario('fuse');
    d.progress('(1/2) s3fs: cp up');
    d.progress('(2/2) s3fs: cp down');
    expect(text).toContain('[###############...............] 50%');
    expect(text).toContain('\x1b[1A\r\x1b[J');
  });
});
