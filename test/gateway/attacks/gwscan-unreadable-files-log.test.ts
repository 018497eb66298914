// Attack on how unreadable entry files are reported. The status page says of them: "Give the
// gateway's user read access, or remove it (the log names each)", and docs/CACHING.md: an entry
// file that cannot be read "is skipped, not deleted, with a warning naming it". The index read
// logs one line for all the files, naming only the first: the others are named nowhere (the
// status page shows three). The gateway runs as nobody, since root reads every file.

import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { freePort, sleep } from './gateway-lib.ts';
import { bodyOf, entryFiles, get, pathOrigin, readMeta, seedCache, sha } from './gwindex2-lib.ts';

afterAll(runTeardowns);

const ESTUARY = join(import.meta.dirname, '..', '..', '..', 'bin', 'estuary.js');
const NOBODY = 65534;

describe('entry files the gateway cannot read', () => {
  it('the status page sends the user to the log only for names the log holds; the others are served as stored', async () => {
    const o = await pathOrigin();
    const cacheDir = await tempDir('gwscan-files-');
    await seedCache(cacheDir, o, 12);
    chmodSync(cacheDir, 0o755);
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, cacheDir]);
    const byUrl = new Map(entryFiles(cacheDir).map((f) => [new URL(readMeta(f).url).pathname, f]));
    const locked = [0, 1, 2, 3, 4].map((i) => byUrl.get(`/o/${i}`)!);
    for (const f of locked) {
      chownSync(f, 0, 0);
      chmodSync(f, 0o600);
    }

    const port = await freePort();
    const child = startChild('setpriv', [
      `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', NODE, ESTUARY, 'gateway',
      '--listen', `127.0.0.1:${port}`, '--log-format', 'json', '--upstream', `o=http://127.0.0.1:${o.port}`,
      '--cache-dir', cacheDir,
    ]);
    await child.waitFor(/gateway listening/, 30_000);
    const hits = o.hits.get('/o/9') ?? 0;
    const r = await get(port, '/o/9');
    expect(sha(r.body)).toBe(sha(bodyOf('/o/9')));
    expect(o.hits.get('/o/9') ?? 0).toBe(hits); // a hit: stored before, readable
    await sleep(500);
    const log = child.output();
    expect(log).toContain('cannot read cache files');
    // Expected: what the status page promises holds — either the log names every file, or the
    // page does not send the user to the log for names it does not hold (one line per file
    // would flood the log when thousands are unreadable; the purge answer lists them all).
    const page = (await get(port, '/estuary/v1/status')).body.toString();
    expect(page).toContain('cannot read');
    const named = locked.filter((f) => log.includes(f)).length;
    expect(named === locked.length || !page.includes('the log names each')).toBe(true);
    await child.stop();
  }, 40_000);
});
