import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { callerHideFor, hideForOf, tellsItsCall } from '../../fuse/caller-syscall.ts';

describe('the system call behind a hide', () => {
  it('names the renames and unlinks of x86-64 and arm64 by number', () => {
    for (const nr of [82, 264, 316]) expect(hideForOf(`${nr} 0xffffff9c 0x7ffd 0x0 0x0 0x0 0x0 0x7ffd 0x7f00`, 'x64')).toBe('rename');
    for (const nr of [87, 263]) expect(hideForOf(`${nr} 0x1 0x2 0x0 0x0 0x0 0x0 0x7ffd 0x7f00`, 'x64')).toBe('unlink');
    expect(hideForOf('38 0x1 0x2', 'arm64')).toBe('rename');
    expect(hideForOf('276 0x1 0x2', 'arm64')).toBe('rename');
    expect(hideForOf('35 0x1 0x2', 'arm64')).toBe('unlink');
    // 38 is setitimer on x86-64: no rename there.
    expect(hideForOf('38 0x1 0x2', 'x64')).toBeUndefined();
  });

  it('knows nothing of a running task, one outside a system call, another call, or another architecture', () => {
    expect(hideForOf('running', 'x64')).toBeUndefined();
    expect(hideForOf('-1 0x7ffd 0x7f00', 'x64')).toBeUndefined();
    expect(hideForOf('0 0x3 0x7ffd 0x1000', 'x64')).toBeUndefined();
    expect(hideForOf('316 0x1', 'riscv64')).toBeUndefined();
    expect(hideForOf('', 'x64')).toBeUndefined();
  });

  it('answers undefined for no pid, a gone one, and this running process', () => {
    expect(callerHideFor(undefined)).toBeUndefined();
    expect(callerHideFor(0)).toBeUndefined();
    expect(callerHideFor(2 ** 31 - 2)).toBeUndefined();
    // Reading our own file: we are running, not blocked in a call.
    expect(readFileSync('/proc/self/syscall', 'latin1').startsWith('running') ? callerHideFor(process.pid) : undefined).toBeUndefined();
  });

  it('does not trust the syscall file of an io_uring worker or a kernel thread', () => {
    const stat = (comm: string, flags: number) => `4242 (${comm}) S 1 4242 4242 0 -1 ${flags} 0 0 0 0 0 0 0 0 20 0 1 0`;
    expect(tellsItsCall(stat('python3', 0x400000))).toBe(true);
    // A name with spaces and parentheses does not shift the fields.
    expect(tellsItsCall(stat('a) b (c', 0x400000))).toBe(true);
    expect(tellsItsCall(stat('iou-wrk-4242', 0x400010))).toBe(false);
    expect(tellsItsCall(stat('nfsd', 0x208040))).toBe(false);
    expect(tellsItsCall('garbage')).toBe(false);
    expect(tellsItsCall(readFileSync('/proc/self/stat', 'latin1'))).toBe(true);
  });
});
