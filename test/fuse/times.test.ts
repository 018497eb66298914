// Times on a real mount, with real syscalls: mtime set alone (`touch -m -d`), set to now after a
// write, ctime advanced by chmod, chown, rename and write but not by reads, and a directory's mtime
// and ctime advanced by a create, remove or rename in it. Stores keep whole seconds, so each step
// waits a little over one.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../helpers/cleanup.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { fuseAvailable, mountBucket, sh } from './mount-helpers.ts';

afterAll(runTeardowns);

type Times = { m: number; c: number };

describe.runIf(fuseAvailable().ok)('times on a real mount', () => {
  it('keeps mtime, ctime and directory times as a local filesystem does', async () => {
    const server = await startS3rver({ buckets: ['times'] });
    const m = await mountBucket(server, 'times');
    // Each step prints "<label> <path> <mtime> <ctime>" for the paths it looks at.
    const script = `
      set -e; cd '${m.dir}'
      at() { for p in "\${@:2}"; do echo "$1 $p $(stat -c '%Y %Z' "$p")"; done; }
      # A plain upload's times are its Last-Modified, learnt after close() (SEMANTICS "Times": they
      # may move once, by less than the upload took); a first chmod stores them, so they are settled.
      mkdir d; echo a > d/f; chmod 640 d/f; at start d d/f
      sleep 1.1; chmod 600 d/f; at chmod d d/f
      sleep 1.1; chown 1234 d/f; at chown d/f
      sleep 1.1; cat d/f > /dev/null; at read d/f
      sleep 1.1; touch d/g; at create d
      sleep 1.1; rm d/g; at remove d
      sleep 1.1; mv d/f d/h; at rename d d/h
      sleep 1.1; echo b >> d/h; at write d/h
      sleep 1.1; touch d/h; at now d/h`;
    const r = await sh(script);
    expect(r.code, r.out).toBe(0);
    const t = new Map<string, Times>();
    for (const line of r.out.trim().split('\n')) {
      const [label, path, mtime, ctime] = line.split(' ');
      t.set(`${label} ${path}`, { m: Number(mtime), c: Number(ctime) });
    }
    const get = (k: string) => t.get(k)!;
    // chmod and chown change ctime only; a read changes neither.
    expect(get('chmod d/f').m).toBe(get('start d/f').m);
    expect(get('chmod d/f').c).toBeGreaterThan(get('start d/f').c);
    expect(get('chown d/f').c).toBeGreaterThan(get('chmod d/f').c);
    expect(get('chown d/f').m).toBe(get('start d/f').m);
    expect(get('read d/f')).toEqual(get('chown d/f'));
    // The directory: not by chmod of an entry; by a create, a remove and a rename in it.
    expect(get('chmod d')).toEqual(get('start d'));
    expect(get('create d').m).toBeGreaterThan(get('start d').m);
    expect(get('create d').c).toBeGreaterThan(get('start d').c);
    expect(get('remove d').m).toBeGreaterThan(get('create d').m);
    expect(get('rename d').m).toBeGreaterThan(get('remove d').m);
    // A rename keeps mtime and moves ctime; a write moves both; utimensat(now) moves mtime.
    expect(get('rename d/h').m).toBe(get('start d/f').m);
    expect(get('rename d/h').c).toBeGreaterThan(get('chown d/f').c);
    expect(get('write d/h').m).toBeGreaterThan(get('rename d/h').m);
    expect(get('write d/h').c).toBeGreaterThan(get('rename d/h').c);
    expect(get('now d/h').m).toBeGreaterThan(get('write d/h').m);
  }, 60_000);

  it('sets the mtime alone with touch -m, and leaves it alone with touch -a', async () => {
    // Needs fuse-native as npm ci rebuilds it (scripts/patch-fuse-native.sh, flag_utime_omit_ok).
    const server = await startS3rver({ buckets: ['touch'] });
    const m = await mountBucket(server, 'touch');
    const r = await sh(
      `cd '${m.dir}' && echo a > f && touch -m -d @1950000000 f && stat -c %Y f && touch -a f && stat -c %Y f`,
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out.trim().split('\n')).toEqual(['1950000000', '1950000000']);
  }, 30_000);
});
