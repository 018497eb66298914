import { describe, expect, it } from 'vitest';
import { pendingCleanups, registerCleanup, runCleanups } from '../../bench/cleanup.ts';

describe('bench clean-up registry', () => {
  it('undoes everything newest first and reports what could not be undone', async () => {
    const order: string[] = [];
    registerCleanup('namespace', () => void order.push('namespace'));
    registerCleanup('server', () => {
      order.push('server');
      throw new Error('still running');
    });
    registerCleanup('mount', () => void order.push('mount'));
    const failed = await runCleanups();
    expect(order).toEqual(['mount', 'server', 'namespace']);
    expect(failed).toEqual(['server: still running']);
    expect(pendingCleanups()).toBe(0);
  });

  it('an undo run early is not run again', async () => {
    let runs = 0;
    const undo = registerCleanup('relay', () => void runs++);
    await undo();
    await undo();
    await runCleanups();
    expect(runs).toBe(1);
  });
});
