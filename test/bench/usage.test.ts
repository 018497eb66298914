import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { peakRssFromStatus, readStat, sampleUsage } from '../../bench/fuse/usage.ts';

describe('mount process usage', () => {
  it('reads CPU time after a command name with spaces and parentheses', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[11] = '250'; // utime, field 14
    fields[12] = '50'; // stime, field 15
    fields[19] = '123456'; // starttime, field 22
    const line = `4242 (node (a) b) ${fields.join(' ')}`;
    expect(readStat(line, 100)).toEqual({ cpuSeconds: 3, startTicks: '123456' });
    expect(() => readStat('4242 (x) R', 100)).toThrow(/unreadable/);
  });

  it('reads the peak resident set, or 0 for a process without one', () => {
    expect(peakRssFromStatus('Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t 1024 kB\n')).toBe(204800 * 1024);
    expect(peakRssFromStatus('Name:\tzombie\nState:\tZ\n')).toBe(0);
  });

  it('samples a live process until it exits, and keeps the last sample', async () => {
    // Half a second of CPU (not of wall clock: on a busy machine half a second of wall clock can
    // be 0.1 s of CPU) and a 64 MB buffer held until the end.
    const child = spawn(process.execPath, [
      '-e',
      'const b = Buffer.alloc(64e6, 1); const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; }; const t = cpu(); while (cpu() - t < 0.5); console.log(b[0]);',
    ]);
    const sampler = sampleUsage(child.pid!);
    await once(child, 'exit');
    sampler.stop();
    const u = sampler.last();
    expect(u?.cpuSeconds).toBeGreaterThan(0.2);
    expect(u?.peakRssBytes).toBeGreaterThan(64e6);
  });
});
