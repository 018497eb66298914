// On a terminal, stage prints failed files (`failed: NAME: error`) and the closing summary with
// the key's name as the store listed it. A key may hold any byte but NUL, so a store (or whoever
// can write a key into the bucket) controls escape sequences written raw to the user's terminal:
// here `ESC ] 0 ; … BEL` sets the window title and `ESC [ 2 J` clears the screen (which can also
// hide the failure lines themselves). A newline in a key likewise splits a one-line message.
// Expected: control characters in names shown escaped (as the JSON output already does), so the
// only escape sequence on the terminal is stage's own line erase (ESC [ K).

import { afterAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startFakeS3 } from './stage-fake-s3.ts';
import { ESTUARY } from './stage-run.ts';

afterAll(runTeardowns);

const SCRIPT = '/usr/bin/script'; // util-linux: runs the command on a pseudo-terminal

describe.runIf(existsSync(SCRIPT))('stage on a terminal: names with control characters', () => {
  it('writes no escape sequence from a key to the terminal', async () => {
    const evil = 'p/\x1b]0;PWNED\x07\x1b[2Jclear.txt';
    // A wrong recorded SHA-256, so the file fails and its name is printed.
    const s3 = await startFakeS3(new Map([[evil, { body: Buffer.from('x'), sha256: 'f'.repeat(64) }], ['p/ok', { body: Buffer.from('ok'), sha256: true }]]));
    const dest = join(await tempDir(), 'd');
    const cmd = [NODE, ESTUARY, 'stage', 'in', 's3://bkt/p/', dest, '--endpoint', s3.endpoint, '--state-dir', await tempDir()].map((a) => `'${a}'`).join(' ');
    const child = startChild(SCRIPT, ['-qefc', cmd, '/dev/null'], { env: { ...process.env, AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' } });
    expect(await child.exited).toBe(1);
    const out = child.output();
    expect(out).toMatch(/failed: /);
    const sequences = out.match(/\x1b[^K]*?[A-Za-z\x07]/g) ?? [];
    expect(sequences.filter((s) => s !== '\x1b[K')).toEqual([]);
  });
});
