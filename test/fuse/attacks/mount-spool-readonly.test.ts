// The cache disk turns read-only (an ext4 error remount, an admin's `mount -o remount,ro`) while
// a file streams and its parts are copied to the staging file with direct I/O. docs/SEMANTICS.md,
// "write, everything else": a cache disk that cannot take the copy drops it "as past the limit
// does" — the stream goes on, a write out of order is refused with an errno, and nothing reaches
// the bucket before close(). Expected: the writer's sequential bytes all arrive at close, the
// write out of order gets an errno (not a hang, not a crash of the mount), and the mount lives on.

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { s3Client } from '../../helpers/s3-smoke.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { tempDir } from '../../helpers/tmp.ts';

afterAll(runTeardowns);

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const fuse = fuseAvailable();

describe.runIf(fuse.ok)('mount: the cache disk turns read-only mid-write', () => {
  // `child`: the check that the disk turned read-only runs in a child process, which inherits the
  // descriptor; its exit closes that copy, and the kernel's flush publishes the file as it stands
  // (docs/SEMANTICS.md, "close"). The writer then appends to an object with no local copy.
  const title = 'the stream goes on, the write out of order gets an errno, the bucket has every sequential byte';
  it.each(['self', 'child'])(`${title} (check by %s)`, async (probe) => {
    const dir = await tempDir('estuary-rodisk-');
    const mnt = join(dir, 'mnt');
    const r = await sh(
      `set -e; truncate -s 128M '${dir}/img'; dev=$(losetup -f --show '${dir}/img'); echo $dev > '${dir}/dev';` +
        ` mkfs.ext4 -q $dev; mkdir '${mnt}'; mount -o errors=remount-ro $dev '${mnt}'`,
    );
    onTeardown(async () => {
      await sh(`umount -l '${mnt}' 2>/dev/null; losetup -d $(cat '${dir}/dev') 2>/dev/null; rm -f '${dir}/img'`);
    });
    expect(r.code, r.out).toBe(0);
    const server = await startS3rver({ buckets: ['data'] });
    const m = await mountBucket(server, 'data', ['--cache-dir', mnt, '--part-size', '5MiB']);
    const script = `
import os, random, json, subprocess
out = {'sequential': 'ok'}
fd = os.open('${m.dir}/f', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
ref = open('${dir}/ref', 'wb')
for i in range(30):
    b = random.Random(i).randbytes(1 << 20)
    try:
        os.write(fd, b)
    except OSError as e:
        out['sequential'] = 'MiB %d: %s' % (i, os.strerror(e.errno))
        break
    ref.write(b)
    if i == 11:
        # An ext4 error with errors=remount-ro: the kernel turns the file system read-only.
        dev = open('${dir}/dev').read().strip().split('/')[-1]
        open('/sys/fs/ext4/' + dev + '/trigger_fs_error', 'w').write('test')
        if '${probe}' == 'child':
            assert subprocess.run(['touch', '${mnt}/probe'], stderr=subprocess.DEVNULL).returncode != 0
        else:
            try:
                os.close(os.open('${mnt}/probe', os.O_WRONLY | os.O_CREAT, 0o644)); assert False, 'still writable'
            except OSError:
                pass
try:
    os.pwrite(fd, b'Z' * 4097, 4095); out['seekback'] = 'ok'
except OSError as e:
    out['seekback'] = os.strerror(e.errno)
try:
    os.close(fd); out['close'] = 'ok'
except OSError as e:
    out['close'] = os.strerror(e.errno)
ref.close()
print(json.dumps(out))
`;
    await sh(`cat > '${dir}/w.py' <<'PY'\n${script}\nPY`);
    const w = await sh(`timeout 40 python3 '${dir}/w.py'`, undefined, 50_000);
    expect(w.code, `${w.out}\n${m.child.output().slice(-3000)}`).toBe(0);
    const got = JSON.parse(w.out.trim().split('\n').at(-1)!) as Record<string, string>;
    expect(got.sequential, `sequential writes after the cache disk turned read-only\n${m.child.output().slice(-2000)}`).toBe('ok');
    expect(got.seekback).not.toBe('ok');
    expect(got.close).toBe('ok');
    const body = await s3Client(server)
      .send(new GetObjectCommand({ Bucket: 'data', Key: 'f' }))
      .then(async (o) => Buffer.from(await o.Body!.transformToByteArray()));
    const want = (await sh(`md5sum '${dir}/ref'`)).out.split(' ')[0];
    expect(md5(body)).toBe(want);
    // One warning, with its code, says the copy was dropped and why.
    const drops = m.child.output().split('\n').filter((l) => l.includes('ESTUARY_FS_COPY_DROPPED'));
    expect(drops.length, m.child.output().slice(-3000)).toBe(1);
    // EROFS once the kernel has turned it read-only; ext4 answers EFSBADCRC or EFSCORRUPTED
    // for a moment before the remount lands.
    expect(drops[0]).toMatch(/"errno":"(EROFS|EBADMSG|EUCLEAN)"/);
    // The mount still serves.
    expect((await sh(`echo hi > '${m.dir}/after' && cat '${m.dir}/after'`)).out.trim()).toBe('hi');
  }, 60_000);
});
