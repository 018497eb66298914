import { describe, expect, it } from 'vitest';
import { DROP_LOG_EVERY_MS, DROP_LOG_MAX_LINES, DropLog, peekSource } from '../../discovery/drop-log.ts';

describe('drop log throttling', () => {
  it('one line per cache per window, counting what it held back', () => {
    const d = new DropLog();
    expect(d.admit({ uuid: 'a' }, 'invalid', 0)).toEqual({ suppressedSinceLast: 0, heldBackOverall: 0 });
    expect(d.admit({ uuid: 'a' }, 'invalid', 1)).toBeUndefined();
    expect(d.admit({ uuid: 'b' }, 'invalid', 2)).toBeDefined();
    expect(d.admit({ uuid: 'a' }, 'flood', 3)).toBeDefined();
    expect(d.admit({ uuid: 'a' }, 'invalid', DROP_LOG_EVERY_MS + 1)).toEqual({ suppressedSinceLast: 1, heldBackOverall: 0 });
  });
  it('caps the lines of a window over all caches, so made-up uuids cannot flood the log', () => {
    const d = new DropLog();
    let shown = 0;
    for (let i = 0; i < DROP_LOG_MAX_LINES * 3; i++) if (d.admit({ uuid: `u${i}` }, 'invalid', 5)) shown++;
    expect(shown).toBe(DROP_LOG_MAX_LINES);
    expect(d.admit({ uuid: 'late' }, 'invalid', DROP_LOG_EVERY_MS + 10)).toMatchObject({
      heldBackOverall: DROP_LOG_MAX_LINES * 2,
    });
  });
  it('reads uuid and hostname from a body it can parse, and nothing from one it cannot', () => {
    expect(peekSource(Buffer.from('{"uuid": "x", "hostname": 3}'))).toEqual({ uuid: 'x' });
    expect(peekSource(Buffer.from('nope'))).toEqual({});
    expect(peekSource(Buffer.from('null'))).toEqual({});
  });
});
