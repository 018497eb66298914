// `estuary discovery` refusing to start: the sentence on stderr, and the code in the log.

import { describe, expect, it } from 'vitest';
import { NODE, startChild } from '../helpers/process.ts';

const BIN = new URL('../../bin/estuary.js', import.meta.url).pathname;

describe('estuary discovery without keys or --shoal-compat', () => {
  it('exits 2 with one sentence and logs ESTUARY_DISC_NO_KEYS', async () => {
    const child = startChild(NODE, [BIN, 'discovery', '--log-format', 'json', '--listen', '127.0.0.1:0']);
    expect(await child.exited).toBe(2);
    const out = child.output();
    expect(out).toContain('"code":"ESTUARY_DISC_NO_KEYS"');
    expect(out).toMatch(/^estuary: no --hmac-key given and --shoal-compat is off.*$/m);
  });
});
