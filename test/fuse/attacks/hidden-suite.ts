// The attacks on removal of open files and renames over open writers through a real mount
// (docs/SEMANTICS.md, "unlink.", "rename.", "write, everything else"), registered once per server
// by hidden-minio.test.ts and hidden-swift.test.ts. Every published object is compared by SHA-256
// with what the program wrote; "nothing in the bucket" is checked by another client's listing,
// including unfinished multipart uploads.

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { S3Server } from '../../helpers/s3rver.ts';
import { type Bucket, eventually, freshMount, MiB, ops, opsResult, sha256 } from './hidden-harness.ts';
import { sh } from '../mount-helpers.ts';

const HIDDEN = '.fuse_hidden0123456789abcdef';
/** Small parts and a small staging limit, so that "past --staging-limit" costs megabytes. */
const SMALL = ['--part-size', '5MiB', '--staging-limit', '8MiB'];

export function hiddenSuite(server: () => S3Server): void {
  type M = Awaited<ReturnType<typeof freshMount>>;
  let plain: M;
  let small: M;
  let wb: M;
  beforeAll(async () => {
    plain = await freshMount(server(), ['--part-size', '5MiB']);
    small = await freshMount(server(), SMALL);
    wb = await freshMount(server(), ['--part-size', '5MiB', '--write-back']);
  }, 40_000);

  const nothingLeft = async (bucket: Bucket, name: string) => {
    expect(await bucket.keys()).not.toContain(name);
    // A removed file's stream must not stay behind as an unfinished multipart upload.
    expect(await eventually(async () => !(await bucket.uploads()).includes(name), 3000)).toBe(true);
  };

  describe('mkstemp then unlink', () => {
    // SEMANTICS "unlink.": stays readable and writable through its descriptors, not recreated at close.
    for (const [label, m, before, after] of [
      ['one part, default', () => plain, 1 * MiB, 1 * MiB],
      ['several parts sent before the unlink, default', () => plain, 24 * MiB, 3 * MiB],
      ['several parts, --write-back', () => wb, 24 * MiB, 3 * MiB],
    ] as const) {
      it(`${label}: the descriptor keeps every byte and the bucket never holds the file`, async () => {
        const { bucket, mnt } = m();
        const name = `tmp-${before}-${label.length}`;
        const run = await ops(['tmpfile', join(mnt.dir, name), String(before), String(after)]);
        await run.reached('unlinked');
        expect(await bucket.keys()).not.toContain(name);
        await run.open('unlinked');
        await run.reached('before-close');
        await nothingLeft(bucket, name);
        await run.open('before-close');
        const r = await run.result();
        expect(r).toMatchObject({
          exists_after_unlink: false,
          write_err: null,
          read_err: null,
          read_ok: true,
          truncate_err: null,
          write2_err: null,
          read2_ok: true,
          fsync_err: null,
          close_err: null,
          exists_after_close: false,
          fstat_size: before + after,
        });
        await nothingLeft(bucket, name);
        expect(await readdir(mnt.dir)).not.toContain(name);
      }, 30_000);
    }

    it('past --staging-limit: writes are taken, close succeeds, and nothing stays in the bucket', async () => {
      // SEMANTICS "unlink.": "later writes are taken and dropped"; the parts already sent must not
      // stay behind as an unfinished multipart upload, nor the file as an object.
      const { bucket, mnt } = small;
      const r = await opsResult(['tmpfile', join(mnt.dir, 'big-tmp'), String(24 * MiB), String(1 * MiB)]);
      expect(r).toMatchObject({ exists_after_unlink: false, write_err: null, close_err: null, exists_after_close: false });
      await nothingLeft(bucket, 'big-tmp');
    }, 30_000);
  });

  describe('the name recreated while the unlinked descriptor is open', () => {
    for (const [label, m] of [
      ['default', () => plain],
      ['--write-back', () => wb],
    ] as const) {
      it(`${label}: the old descriptor's writes, fsync, fchmod, futimes, ftruncate and close leave the new file alone`, async () => {
        const { bucket, mnt } = m();
        const r = await opsResult(['recreate', join(mnt.dir, 'again'), String(6 * MiB)]);
        expect(r.read_sha).toBe(r.new_sha);
        expect(r.mode).toBe('0o640');
        expect(r.old_close_err).toBe(null);
        expect(await eventually(async () => (await bucket.sha('again')) === r.new_sha, 5000)).toBe(true);
        // As on a local filesystem, fchmod and futimes of an open unlinked file succeed.
        expect(r.old_fchmod_err).toBe(null);
        expect(r.old_futimes_err).toBe(null);
      }, 30_000);
    }
  });

  it('a file rewritten, renamed away and then removed while open: neither name is in the bucket meanwhile', async () => {
    // SEMANTICS "unlink.": "nothing of the file is in the bucket under any name meanwhile, nor
    // after a crash". The file was renamed a -> b and b removed: a is gone as far as the user knows.
    const { bucket, mnt } = plain;
    await bucket.put('ra', Buffer.from('old content of ra'));
    const run = await ops(['renamed-then-removed', join(mnt.dir, 'ra'), join(mnt.dir, 'rb'), String(2 * MiB)]);
    await run.reached('removed');
    const during = await bucket.keys();
    await run.open('removed');
    const r = await run.result();
    expect(r).toMatchObject({ a_visible: false, b_visible: false, close_err: null });
    expect(during).not.toContain('rb');
    expect(during).not.toContain('ra');
    expect(await bucket.keys()).not.toContain('ra');
  }, 30_000);

  describe(`a user's own file named ${HIDDEN}`, () => {
    it('put by another client: listed, read, and removed only when asked', async () => {
      const { bucket, mnt } = plain;
      await bucket.put(HIDDEN, Buffer.from('mine'));
      expect(await readdir(mnt.dir)).toContain(HIDDEN);
      const cat = await sh(`cat '${join(mnt.dir, HIDDEN)}'`);
      expect(cat.out).toBe('mine');
      expect((await sh(`rm '${join(mnt.dir, HIDDEN)}'`)).code).toBe(0);
      expect(await bucket.keys()).not.toContain(HIDDEN);
    }, 20_000);

    it('a file renamed to that name while a reader holds it open is kept under it, not deleted', async () => {
      // mv(1) of an open file to a name the user chose: rename(2) promises the content at the
      // new name (SEMANTICS "rename."); nothing says a name of that form deletes the file.
      const { bucket, mnt } = plain;
      const content = Buffer.from('precious data renamed while open\n');
      await bucket.put('keepme', content);
      const holder = await ops(['hold-open', join(mnt.dir, 'keepme'), 'r']);
      await holder.reached('open');
      const mv = await sh(`mv '${join(mnt.dir, 'keepme')}' '${join(mnt.dir, HIDDEN.replace('0123', '4567'))}'`);
      await holder.open('open');
      await holder.open('release');
      await holder.result();
      expect(mv.code).toBe(0);
      expect(await readdir(mnt.dir)).toContain(HIDDEN.replace('0123', '4567'));
      expect(await bucket.sha(HIDDEN.replace('0123', '4567'))).toBe(sha256(content));
    }, 20_000);

    it('a file being written, renamed to that name by its writer: the written bytes are published under it', async () => {
      const { bucket, mnt } = plain;
      const target = HIDDEN.replace('0123', 'cdef');
      const script = `import os,sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b'report, part one\\n')
os.rename(sys.argv[1], sys.argv[2])
os.write(fd, b'report, part two\\n')
os.close(fd)`;
      const r = await sh(`python3 -c "${script.replace(/"/g, '\\"')}" '${join(mnt.dir, 'report')}' '${join(mnt.dir, target)}'`);
      expect(r.code).toBe(0);
      expect((await bucket.body(target))?.toString()).toBe('report, part one\nreport, part two\n');
    }, 20_000);

    it('a file renamed over an existing object of that name while open replaces it', async () => {
      const { bucket, mnt } = plain;
      const target = HIDDEN.replace('0123', '89ab');
      const content = Buffer.from('new content\n');
      await bucket.put(target, Buffer.from('old content\n'));
      await bucket.put('src', content);
      const holder = await ops(['hold-open', join(mnt.dir, 'src'), 'r']);
      await holder.reached('open');
      const mv = await sh(`mv '${join(mnt.dir, 'src')}' '${join(mnt.dir, target)}'`);
      await holder.open('open');
      await holder.open('release');
      await holder.result();
      expect(mv.code).toBe(0);
      expect(await bucket.sha(target)).toBe(sha256(content));
    }, 20_000);
  });

  for (const [label, m] of [
    ['default', () => plain],
    ['--write-back', () => wb],
  ] as const) {
    it(`${label}: rename over an open writer leaves the renamed file, untouched by the writer's close`, async () => {
      const { bucket, mnt } = m();
      const writer = await ops(['writer', join(mnt.dir, 'target'), '3', String(2 * MiB), '70']);
      await writer.reached('first');
      const fresh = Buffer.from('the file renamed over the open writer\n');
      await bucket.put('incoming', fresh);
      const mv = await sh(`mv '${join(mnt.dir, 'incoming')}' '${join(mnt.dir, 'target')}'`);
      expect(mv.code).toBe(0);
      await writer.open('first');
      await writer.reached('before-close');
      await writer.open('before-close');
      const r = await writer.result();
      expect(r.write_errs).toEqual([]);
      expect(r.read_ok).toBe(true);
      // With --write-back the journal uploads later: give it time to do the wrong thing.
      if (label !== 'default') await new Promise((res) => setTimeout(res, 2000));
      expect(await bucket.sha('target')).toBe(sha256(fresh));
      expect(await bucket.keys()).not.toContain('incoming');
    }, 30_000);
  }

  it('a stream past --staging-limit renamed while open, then appended: the new name holds every byte', async () => {
    // SEMANTICS "rename.": a rename never fails for want of a local copy (it publishes first);
    // "write, everything else": the append goes on from the copy it made.
    const { bucket, mnt } = small;
    const r = await opsResult(['rename-streaming', join(mnt.dir, 'sa'), join(mnt.dir, 'sb'), String(24 * MiB), String(6 * MiB)]);
    expect(r).toMatchObject({ rename_err: null, append_err: null, close_err: null });
    expect(await bucket.sha('sb')).toBe(r.whole_sha);
    expect(await bucket.keys()).not.toContain('sa');
  }, 40_000);

  for (const how of ['in parts', 'in one PUT'] as const) {
    it(`append after a flush without a local copy, the object replaced ${how} meanwhile: never a mixed object`, async () => {
      // SEMANTICS "write, everything else": "if another client replaced the object meanwhile, the
      // append fails (at the latest at the next close() or fsync()) and the other client's object stands".
      const { bucket, mnt } = small;
      const name = `af-${how.length}`;
      const run = await ops(['append-after-flush', join(mnt.dir, name), String(24 * MiB), String(6 * MiB)]);
      await run.reached('flushed');
      // Same size; in parts it is an SLO on Swift, on whose copies the condition is refused.
      const theirs = Buffer.alloc(24 * MiB, 0x5a);
      if (how === 'in parts') await bucket.putMultipart(name, theirs);
      else await bucket.put(name, theirs);
      await run.open('flushed');
      const r = await run.result();
      expect(r.fsync_err).toBe(null);
      expect(await bucket.sha(name)).toBe(sha256(theirs));
      expect(r.fsync2_err ?? r.close_err ?? r.append_err).not.toBe(null);
    }, 40_000);
  }

  it('a stream past --staging-limit renamed while open, the new name replaced by another client before the append: theirs stands', async () => {
    const { bucket, mnt } = small;
    const run = await ops(['rename-streaming', join(mnt.dir, 'ta'), join(mnt.dir, 'tb'), String(24 * MiB), String(6 * MiB)]);
    await run.reached('renamed');
    const theirs = Buffer.alloc(24 * MiB, 0x33);
    await bucket.putMultipart('tb', theirs);
    await run.open('renamed');
    const r = await run.result();
    expect(r.rename_err).toBe(null);
    expect(await bucket.sha('tb')).toBe(sha256(theirs));
    expect(r.append_err ?? r.close_err).not.toBe(null);
    expect(await bucket.keys()).not.toContain('ta');
  }, 40_000);

  it('append after a flush without a local copy, nothing changed meanwhile: the object is whole', async () => {
    const { bucket, mnt } = small;
    const r = await opsResult(['append-after-flush', join(mnt.dir, 'ag'), String(24 * MiB), String(6 * MiB)]);
    expect(r).toMatchObject({ fsync_err: null, append_err: null, fsync2_err: null, close_err: null });
    expect(await bucket.sha('ag')).toBe(r.whole_sha);
  }, 40_000);

  for (const [what, act] of [
    ['chmod', (dir: string) => `chmod 600 '${join(dir, 'cm')}'`],
    ['mv', (dir: string) => `mv '${join(dir, 'cm')}' '${join(dir, 'cm-moved')}'`],
  ] as const) {
    it(`append after a flush without a local copy, a ${what} of the file meanwhile: the append goes on and the object is whole`, async () => {
      // SEMANTICS "write, everything else": "A chmod, chown, touch or rename of the file meanwhile
      // is not another client's change: the append goes on from the copy it made."
      const { bucket, mnt } = small;
      const run = await ops(['append-after-flush', join(mnt.dir, 'cm'), String(24 * MiB), String(6 * MiB)]);
      await run.reached('flushed');
      expect((await sh(act(mnt.dir))).code).toBe(0);
      await run.open('flushed');
      const r = await run.result();
      expect(r).toMatchObject({ fsync_err: null, append_err: null, fsync2_err: null, close_err: null });
      const name = what === 'mv' ? 'cm-moved' : 'cm';
      expect(await bucket.sha(name)).toBe(r.whole_sha);
      if (what === 'mv') expect(await bucket.keys()).not.toContain('cm');
      else expect((await sh(`stat -c %a '${join(mnt.dir, 'cm')}'`)).out.trim()).toBe('600');
      await sh(`rm -f '${join(mnt.dir, name)}'`);
    }, 40_000);
  }

  it('append after a flush of a one-PUT file past --staging-limit goes on as a stream, not EFBIG', async () => {
    // SEMANTICS "write, everything else": "Without one (past the limit, or a failed cache disk),
    // an append right after that close() goes on as a stream too". 12 MiB fits one PUT (under
    // 16 MiB) and is past the 8 MiB limit: the append is refused with EFBIG today.
    const { bucket, mnt } = small;
    const r = await opsResult(['append-after-flush', join(mnt.dir, 'ah'), String(12 * MiB), String(1 * MiB)]);
    expect(r).toMatchObject({ fsync_err: null, append_err: null, fsync2_err: null, close_err: null });
    expect(await bucket.sha('ah')).toBe(r.whole_sha);
  }, 40_000);
}
