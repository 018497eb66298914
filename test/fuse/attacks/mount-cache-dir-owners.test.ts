// Attacks on what a mount owns under --cache-dir (fuse/fs/leftovers.ts, held-lock.ts, journal.ts,
// cache-dir.ts): staging directories and the write-back journal, owned through kernel record locks
// on lock files beside them. The promises (docs/SEMANTICS.md, "After a crash" and "Write-back"):
// the staging directories "of a mount still running on the same directory are left alone"; the
// lock files are "locked again if removed anyway"; "One mount per journal ... A second mount on the
// same --cache-dir is refused with ESTUARY_FS_JOURNAL_IN_USE"; "After a crash or kill -9, mounting
// again ... resumes the uploads". And the tenet of the brief: nothing a user wrote and had
// acknowledged may be lost, nothing of a live mount may be deleted, and what the mount did not make
// is not its to delete.

import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startChild } from '../../helpers/process.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { type S3rverServer, startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, sh } from '../mount-helpers.ts';
import { mount, mounted, secondStart, unmount } from './cache-dir-mounts.ts';
import { startRelay } from './mount-relay.ts';

afterAll(runTeardowns);

const BUCKET = 'kek';

let s3: S3rverServer;

describe.runIf(fuseAvailable().ok)("what a mount owns under --cache-dir, attacked through the lock files and the directory's contents", () => {
  beforeAll(async () => {
    s3 = await startS3rver({ buckets: [BUCKET] });
  }, 30_000);

  // A tmp cleaner or a user who clears `*.lock` files: the running mount re-locks only at its next
  // minute's check. A mount started in between creates a fresh lock file, takes it, and removes the
  // running mount's staging directory (with the local copy of a file open for change in it).
  it("a running mount's staging directory survives a second start after its lock file was removed", async () => {
    const cache = await tempDir('estuary-atk-cache-');
    const a = await mounted(await mount(s3, BUCKET, ['--cache-dir', cache]));
    const [staging] = (await readdir(cache)).filter((n) => /^staging-\d+-[0-9a-f]{8}$/.test(n));
    expect(staging).toBeDefined();
    await rm(join(cache, `${staging}.lock`));
    const b = await mounted(await mount(s3, BUCKET, ['--cache-dir', cache]));
    // Expected: A is running, so its staging directory is left alone.
    expect(existsSync(join(cache, staging!)), b.child.output()).toBe(true);
    expect(b.child.output()).not.toMatch(/removed staging files left by a mount that is no longer running/);
    await unmount(b);
    await unmount(a);
  }, 60_000);

  // The same for the journal: after its lock file is removed, a second --write-back mount on the
  // same --cache-dir owns the journal too. Two owners upload and delete the same entries; the
  // second's start deletes every entry whose record the first has not written yet (a close in
  // progress). Expected: ESTUARY_FS_JOURNAL_IN_USE, as when the lock file is there.
  it('a second --write-back mount is refused while the first runs, also after the lock file was removed', async () => {
    const cache = await tempDir('estuary-atk-cache-');
    const a = await mounted(await mount(s3, BUCKET, ['--cache-dir', cache, '--write-back']));
    await rm(join(cache, 'journal', 'lock.lock'));
    const b = await secondStart(await mount(s3, BUCKET, ['--cache-dir', cache, '--write-back']));
    expect(b.mounted, b.out).toBe(false);
    expect(b.out).toMatch(/write-back journal .* is in use/);
    await unmount(a);
  }, 60_000);

  // A mount runs for weeks. Only its lock file is touched every minute (held-lock.ts); its staging
  // directory, empty while no file is being changed in place, ages like any other, and an
  // age-based cleaner of /tmp (systemd-tmpfiles `q /tmp 1777 root root 10d`) removes it as an old
  // empty directory. From then on every append or in-place change fails with EIO until the mount
  // is restarted: the directory is never made again. Expected: SEMANTICS.md says the lock is
  // touched "so age-based tmp cleaners leave it" — the mount keeps working after such a cleaner
  // ran: the staging directory is kept fresh too, or made again when it is found missing.
  it('an in-place change still works after a tmp cleaner removed the empty staging directory', async () => {
    const cache = await tempDir('estuary-atk-cache-');
    const a = await mounted(await mount(s3, BUCKET, ['--cache-dir', cache]));
    await writeFile(join(a.dir, 'log.txt'), 'line 1\n');
    const [staging] = (await readdir(cache)).filter((n) => /^staging-\d+-[0-9a-f]{8}$/.test(n));
    await rmdir(join(cache, staging!)); // what the cleaner does to an old empty directory
    const appended = await sh(`echo 'line 2' >> '${join(a.dir, 'log.txt')}'`);
    const content = await readFile(join(a.dir, 'log.txt'), 'utf8').catch((err: NodeJS.ErrnoException) => String(err.code));
    await unmount(a);
    expect(appended.code, appended.out).toBe(0);
    expect(content).toBe('line 1\nline 2\n');
  }, 60_000);

  // `--cache-dir /scratch/$USER` that already holds the user's own `staging-<number>` folder (a
  // year, a run number). The rule for directories of older releases ("judged by their PID") takes
  // any such name whose number is no live PID for a dead mount's and deletes it recursively.
  // Expected: what the mount did not make (no staging file names in it) is left alone.
  it("leaves alone a user's own staging-<number> folder in --cache-dir", async () => {
    const cache = await tempDir('estuary-atk-cache-');
    await mkdir(join(cache, 'staging-9999999'));
    await writeFile(join(cache, 'staging-9999999', 'thesis.tex'), '\\documentclass{article}\n');
    const a = await mounted(await mount(s3, BUCKET, ['--cache-dir', cache]));
    expect(existsSync(join(cache, 'staging-9999999', 'thesis.tex')), a.child.output()).toBe(true);
    await unmount(a);
  }, 60_000);

  // `--write-back --cache-dir ~/work` where ~/work/journal is the user's own folder: the journal
  // adopts it (no identity file yet) and deletes every file in it that is not a journal entry.
  // Expected: files the mount did not write are never deleted (refuse the folder, or leave them).
  it("never deletes files it did not write from a folder named journal in --cache-dir", async () => {
    const cache = await tempDir('estuary-atk-cache-');
    await mkdir(join(cache, 'journal'));
    await writeFile(join(cache, 'journal', '2026-11-24.txt'), 'lab notes of the day\n');
    const a = await secondStart(await mount(s3, BUCKET, ['--cache-dir', cache, '--write-back']));
    expect(await readFile(join(cache, 'journal', '2026-11-24.txt'), 'utf8').catch(() => 'DELETED'), a.out).toBe(
      'lab notes of the day\n',
    );
  }, 60_000);

  // A mount of an older release still running on the journal (its lock was a file `lock` holding
  // its PID; SEMANTICS.md speaks of journals of older releases) while the upgraded estuary starts a
  // second mount on the same --cache-dir: the new start deletes the old mount's `lock` file
  // ("an older release's lock; this one's lock is held now") without asking whether its PID runs,
  // and both own the journal. Expected: ESTUARY_FS_JOURNAL_IN_USE while that PID is alive, as the
  // older release itself refused.
  it("refuses a journal whose older-release lock names a live process, and keeps that lock", async () => {
    const cache = await tempDir('estuary-atk-cache-');
    await mkdir(join(cache, 'journal'), { recursive: true });
    const old = startChild('sleep', ['60']);
    await writeFile(join(cache, 'journal', 'lock'), `${old.pid}\n`);
    const r = await secondStart(await mount(s3, BUCKET, ['--cache-dir', cache, '--write-back']));
    expect(await readFile(join(cache, 'journal', 'lock'), 'utf8').catch(() => 'DELETED'), r.out).toBe(`${old.pid}\n`);
    expect(r.mounted, r.out).toBe(false);
    expect(r.out).toMatch(/write-back journal .* is in use/);
    await old.stop('SIGKILL');
  }, 60_000);

  // A --cache-dir whose parent exists but where mkdir answers ENOENT (/proc, some automounted or
  // pseudo file systems): Node's recursive mkdir retries for ever, and the mount spins at full CPU
  // with no output instead of refusing. Expected: one ESTUARY_FS_CACHE_DIR line, exit 2, at once.
  it('refuses a --cache-dir where mkdir answers ENOENT instead of spinning for ever', async () => {
    const r = await mount(s3, BUCKET, ['--cache-dir', '/proc/estuary-atk/cache']);
    const code = await Promise.race([r.child.exited, new Promise((done) => setTimeout(() => done('still running after 8 s'), 8000))]);
    await r.child.stop('SIGKILL');
    expect(code, r.child.output()).toBe(2);
    expect(r.child.output()).toMatch(/cache/);
  }, 30_000);

  // A journal record that cannot be read (a truncated or foreign `.json`, or a record of a newer
  // release's version) ends the mount with "unexpected failure" and a stack trace, exit 1.
  // Expected (COMMON rules, docs/ERRORS.md): one line naming the file and what to do, no stack.
  it('names an unreadable journal record in one line, without a stack trace', async () => {
    const cache = await tempDir('estuary-atk-cache-');
    await mkdir(join(cache, 'journal'), { recursive: true });
    await writeFile(join(cache, 'journal', 'x.json'), '{"version":1,"id":"trunc');
    const a = await secondStart(await mount(s3, BUCKET, ['--cache-dir', cache, '--write-back']));
    expect(a.out).not.toMatch(/\n\s+at .*\(file:/);
    expect(a.out).not.toMatch(/unexpected failure/);
    expect(a.out).toContain('x.json');
  }, 60_000);

  // The default journal folder is named by a hash of the endpoint, bucket and prefix *as typed*.
  // `kek/run42` and `kek/run42/` mount the same keys (the prefix is normalised), but their journals
  // are different folders: files a killed mount of one had acknowledged are neither uploaded nor
  // shown by a restart spelled the other way, and no warning says so. (A later mount spelled like
  // the first would upload them over whatever was written meanwhile.)
  it('resumes the journal of a killed mount when the restart spells the prefix with a trailing slash', async () => {
    const relay = await startRelay(s3);
    const xdg = await tempDir('estuary-atk-xdg-');
    const env = { XDG_CACHE_HOME: xdg };
    const a = await mounted(await mount(relay.server, `${BUCKET}/run42`, ['--write-back'], env));
    relay.mode = { kind: 'status', status: 503, method: 'PUT' };
    await writeFile(join(a.dir, 'result.txt'), 'acknowledged result\n');
    await a.child.stop('SIGKILL');
    await sh(`fusermount -uz '${a.dir}'`);
    relay.mode = { kind: 'pass' };

    const b = await mounted(await mount(relay.server, `${BUCKET}/run42/`, ['--write-back'], env));
    const shown = await readFile(join(b.dir, 'result.txt'), 'utf8').catch((err: NodeJS.ErrnoException) => String(err.code));
    const client = s3Client(s3);
    let stored = 'missing';
    for (let i = 0; i < 24 && stored === 'missing'; i++) {
      stored = await client
        .send(new GetObjectCommand({ Bucket: BUCKET, Key: 'run42/result.txt' }))
        .then((r) => r.Body!.transformToString(), () => 'missing');
      if (stored === 'missing') await new Promise((r) => setTimeout(r, 250));
    }
    await unmount(b);
    expect(shown, b.child.output()).toBe('acknowledged result\n');
    expect(stored).toBe('acknowledged result\n');
  }, 60_000);
});

describe.runIf(fuseAvailable().ok)('a killed --write-back mount, restarted on the same --cache-dir without --write-back', () => {
  beforeAll(async () => {
    s3 ??= await startS3rver({ buckets: [BUCKET] });
  }, 30_000);

  // SEMANTICS.md: "After a crash or kill -9, mounting again with the same --cache-dir resumes the
  // uploads". Mounting again with the same --cache-dir but without --write-back (a user who now
  // wants close() to wait) neither uploads nor shows the acknowledged file, and says nothing: the
  // journal folder is not looked at. Expected: the journal's files are uploaded (or at the very
  // least a warning names the journal and how many files wait in it).
  it('does not silently leave acknowledged journal files behind', async () => {
    const relay = await startRelay(s3);
    const cache = await tempDir('estuary-atk-cache-');
    const a = await mounted(await mount(relay.server, `${BUCKET}/wb`, ['--cache-dir', cache, '--write-back']));
    relay.mode = { kind: 'status', status: 503, method: 'PUT' };
    await writeFile(join(a.dir, 'acked.txt'), 'acknowledged\n');
    await a.child.stop('SIGKILL');
    await sh(`fusermount -uz '${a.dir}'`);
    relay.mode = { kind: 'pass' };

    const b = await mounted(await mount(relay.server, `${BUCKET}/wb`, ['--cache-dir', cache]));
    const shown = await readFile(join(b.dir, 'acked.txt'), 'utf8').catch((err: NodeJS.ErrnoException) => String(err.code));
    await unmount(b);
    const stored = await s3Client(s3)
      .send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wb/acked.txt' }))
      .then((o) => o.Body!.transformToString(), () => 'missing');
    const warned = /"level":40[^\n]*journal/.test(b.child.output());
    expect({ shown, stored, warned }, b.child.output()).toSatisfy(
      (r: { shown: string; stored: string; warned: boolean }) =>
        (r.shown === 'acknowledged\n' && r.stored === 'acknowledged\n') || r.warned,
    );
  }, 60_000);
});

describe.runIf(fuseAvailable().ok)('a --cache-dir other users can write to (an HPC /scratch, mode 1777)', () => {
  beforeAll(async () => {
    s3 ??= await startS3rver({ buckets: [BUCKET] });
  }, 30_000);

  // Another user (here uid 65534, nobody) makes `journal` in the shared directory first and puts a
  // record in it. The mount adopts that folder: it is not its own, and anyone may write to it. The
  // planted record is uploaded with the mounting user's credentials, to a key outside the mount's
  // prefix. (A symlink `journal -> /home/other/dir` works the same, and also hands the other user
  // the content of every file closed on the mount.) The default /tmp/estuary-UID is refused when
  // it is not private to the user; a journal folder is not checked at all.
  // Expected: a journal (and cache) folder owned by another user, or writable by others, is
  // refused with ESTUARY_FS_CACHE_DIR, and nothing planted there is ever uploaded.
  it("never uploads a journal record another user planted in a shared --cache-dir", async () => {
    const shared = await tempDir('estuary-atk-shared-');
    await sh(`chmod 1777 '${shared}'`);
    const journal = join(shared, 'journal');
    await mkdir(journal, { mode: 0o777 });
    const planted = 'not yours\n';
    await writeFile(join(journal, 'evil.data'), planted);
    const record = { version: 1, id: 'evil', key: 'elsewhere/planted.txt', size: planted.length, options: {}, createdMs: 0 };
    await writeFile(join(journal, 'evil.json'), JSON.stringify(record));
    await sh(`chown -R 65534:65534 '${journal}' && chmod 0777 '${journal}'`);

    const a = await mount(s3, `${BUCKET}/mine`, ['--cache-dir', shared, '--write-back']);
    const r = await secondStart(a);
    const stored = await s3Client(s3)
      .send(new GetObjectCommand({ Bucket: BUCKET, Key: 'elsewhere/planted.txt' }))
      .then((o) => o.Body!.transformToString(), () => 'absent');
    expect(stored, r.out).toBe('absent');
    expect(r.mounted, r.out).toBe(false);
  }, 60_000);
});

describe.runIf(fuseAvailable().ok)('a journal symlink another user planted in a shared --cache-dir', () => {
  beforeAll(async () => {
    s3 ??= await startS3rver({ buckets: [BUCKET] });
  }, 30_000);

  // The same shared directory, but `journal` is a symlink (owned by uid 65534) to a folder of that
  // user's. The mount follows it: every file closed on the mount is written there, in the other
  // user's folder, until uploaded — and stays there while the store is down. Expected: a symlinked
  // or foreign journal folder is refused at start (ESTUARY_FS_CACHE_DIR), before any file is closed.
  it("never writes closed files into another user's folder through a planted journal symlink", async () => {
    const shared = await tempDir('estuary-atk-shared-');
    const theirs = await tempDir('estuary-atk-theirs-');
    await sh(`chmod 1777 '${shared}' && chmod 0777 '${theirs}' && chown 65534:65534 '${theirs}'`);
    await sh(`ln -s '${theirs}' '${join(shared, 'journal')}' && chown -h 65534:65534 '${join(shared, 'journal')}'`);
    const relay = await startRelay(s3);
    relay.mode = { kind: 'status', status: 503, method: 'PUT' };
    const a = await mount(relay.server, BUCKET, ['--cache-dir', shared, '--write-back']);
    const isUp = await Promise.race([
      a.child.waitFor(/"msg":"mounted /, 30_000).then(() => true, () => false),
      a.child.exited.then(() => false),
    ]);
    let leaked: string[] = [];
    if (isUp) {
      await writeFile(join(a.dir, 'private-results.csv'), 'patient,dose\n');
      leaked = (await readdir(theirs)).filter((n) => n.endsWith('.data'));
      await a.child.stop('SIGKILL');
      await sh(`fusermount -uz '${a.dir}'`);
    }
    expect(leaked, a.child.output()).toEqual([]);
    expect(isUp, a.child.output()).toBe(false);
  }, 60_000);
});
