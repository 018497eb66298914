// Attacks through a real `estuary mount` over s3rver on files removed or replaced while a shell
// holds them open for writing. docs/SEMANTICS.md, "unlink.": a file unlinked while open for
// writing is not recreated when it is closed; a rename over a file replaces it, as on a local
// file system (the old file's descriptors write into a file that has no name any more).

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { fuseAvailable, mountBucket, serverEnv, sh } from '../mount-helpers.ts';

afterAll(runTeardowns);

describe.each([[[] as string[]], [['--write-back']]])('mount %j', (extra) => {
  it('a shell writer of b whose file is replaced by mv a b does not bring its bytes back at close', async () => {
    if (!fuseAvailable()) return;
    const server = await startS3rver({ buckets: ['bkt'] });
    const m = await mountBucket(server, 'bkt', extra);
    const r = await sh(
      [
        'set -e',
        'exec 3>b',
        'printf "writer of b" >&3',
        'printf "renamed a" > a',
        'mv a b',
        'printf " more" >&3',
        'exec 3>&-',
        'sleep 1',
        'cat b',
      ].join('\n'),
      m.dir,
    );
    expect(r).toEqual({ code: 0, out: 'renamed a' });
    const env = Object.entries(serverEnv(server))
      .filter(([k]) => k.startsWith('AWS_'))
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    await sh('sleep 1');
    const inBucket = await sh(`${env} aws --endpoint-url ${server.endpoint} s3 cp s3://bkt/b - 2>&1`);
    expect(inBucket.out).toBe('renamed a');
  }, 40_000);

  it('mkstemp then unlink: the temp file is readable through its descriptor and gone from the bucket', async () => {
    if (!fuseAvailable()) return;
    const server = await startS3rver({ buckets: ['bkt'] });
    const m = await mountBucket(server, 'bkt', extra);
    const r = await sh(
      [
        'set -e',
        `python3 - <<'PY'`,
        'import os, tempfile',
        'fd, p = tempfile.mkstemp(dir=".")',
        'os.write(fd, b"x" * 3_000_000)',
        'os.fsync(fd)',
        'os.unlink(p)',
        'os.lseek(fd, 1_000_000, 0)',
        'os.write(fd, b"hello")',
        'os.lseek(fd, 999_998, 0)',
        'print(os.read(fd, 9))',
        'os.ftruncate(fd, 10)',
        'os.fsync(fd)',
        'os.close(fd)',
        'import time; time.sleep(1)',
        'print(sorted(os.listdir(".")))',
        'PY',
      ].join('\n'),
      m.dir,
    );
    expect(r).toEqual({ code: 0, out: "b'xxhelloxx'\n[]\n" });
    const env = Object.entries(serverEnv(server))
      .filter(([k]) => k.startsWith('AWS_'))
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    const ls = await sh(`${env} aws --endpoint-url ${server.endpoint} s3 ls s3://bkt/ --recursive 2>&1`);
    expect(ls.out).toBe('');
  }, 40_000);

  it('kill -9 of the mount while an unlinked file is open leaves nothing of it in the bucket', async () => {
    // The kernel (no hard_remove) turns unlink of an open file into a rename to .fuse_hidden*;
    // SEMANTICS "unlink." promises the object goes at unlink (DeleteObject), so a crash of the
    // mount meanwhile must not leave the removed file's bytes in the bucket under another name.
    if (!fuseAvailable()) return;
    const server = await startS3rver({ buckets: ['bkt'] });
    const m = await mountBucket(server, 'bkt', extra);
    const env = Object.entries(serverEnv(server))
      .filter(([k]) => k.startsWith('AWS_'))
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    const r = await sh(
      [
        'set -e',
        'head -c 2000000 /dev/zero > secret',
        'exec 3<>secret',
        'rm secret',
        `${env} aws --endpoint-url ${server.endpoint} s3 ls s3://bkt/ --recursive | awk '{print $4}'`,
        `kill -9 ${m.child.pid}`,
        'exec 3>&- || true',
      ].join('\n'),
      m.dir,
    );
    // While the file is open, the bucket should already be without it.
    expect.soft(r.out).toBe('');
    // And at the latest the next start of the mount removes what the crash left.
    await mountBucket(server, 'bkt', extra);
    await sh('sleep 1');
    const ls = await sh(`${env} aws --endpoint-url ${server.endpoint} s3 ls s3://bkt/ --recursive 2>&1`);
    expect(ls.out).toBe('');
  }, 40_000);

  it('rm of a large file held open deletes it from the bucket at once, with no copy left there', async () => {
    // SEMANTICS "unlink.": DeleteObject. The kernel sends the removal of an open file as a rename
    // to .fuse_hidden*, which once cost a copy of the whole object within the bucket and left it
    // there under that name while the file was open. The reader's own copy is kept locally (as
    // documented), so the time of this rm is that of reading the file, not of copying it.
    if (!fuseAvailable()) return;
    const server = await startS3rver({ buckets: ['bkt'] });
    const m = await mountBucket(server, 'bkt', extra);
    const env = Object.entries(serverEnv(server))
      .filter(([k]) => k.startsWith('AWS_'))
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    const r = await sh(
      [
        'set -e',
        'head -c 20000000 /dev/urandom > held',
        'exec 3<held',
        'rm held',
        `${env} aws --endpoint-url ${server.endpoint} s3api list-objects-v2 --bucket bkt --query 'Contents[].Key' --output text 2>&1`,
        'cat <&3 | wc -c',
        'exec 3<&-',
      ].join('\n'),
      m.dir,
    );
    expect(r).toEqual({ code: 0, out: 'None\n20000000\n' });
  }, 60_000);

  it('rm of a file being written past --staging-limit succeeds and the writer goes on', async () => {
    // The kernel sends rm of an open file as a rename to .fuse_hidden*. A stream past
    // --staging-limit has no local copy to move, but rm(1) must still work (SEMANTICS "unlink.").
    if (!fuseAvailable()) return;
    const server = await startS3rver({ buckets: ['bkt'] });
    const m = await mountBucket(server, 'bkt', [...extra, '--staging-limit', '6MiB']);
    const r = await sh(
      [
        'exec 3>big',
        'head -c 40000000 /dev/zero >&3',
        'rm big; echo rm=$?',
        'printf more >&3; echo write=$?',
        'exec 3>&-; echo close=$?',
        'ls -A',
      ].join('\n'),
      m.dir,
    );
    expect(r.out).toBe('rm=0\nwrite=0\nclose=0\n');
  }, 60_000);

  it('kill -9 during the append after a flush without a local copy leaves the published object whole', async () => {
    // SEMANTICS "close": content reaches the bucket only at close or fsync; a crash mid-append
    // leaves the object as last published, never a partial one.
    if (!fuseAvailable()) return;
    const server = await startS3rver({ buckets: ['bkt'] });
    const m = await mountBucket(server, 'bkt', [...extra, '--staging-limit', '6MiB']);
    const env = Object.entries(serverEnv(server))
      .filter(([k]) => k.startsWith('AWS_'))
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    // Every close of any copy of the descriptor is a close (SEMANTICS "close"), even one in a
    // forked child that drops it with 3>&-. So the killer is forked before the file is opened, and
    // the shell then becomes the appending writer: no other process holds the descriptor while
    // the append runs. The killer waits until the append has begun (the size is past 20 MB).
    await sh(
      [
        `(for i in $(seq 400); do [ "$(stat -c %s f 2>/dev/null || echo 0)" -gt 20000000 ] && break; sleep 0.05; done; sleep 0.2; kill -9 ${m.child.pid}) &`,
        'exec 3>f',
        'head -c 20000000 /dev/zero >&3',
        'exec head -c 30000000 /dev/urandom >&3',
      ].join('\n'),
      m.dir,
    );
    await sh('sleep 1');
    const headObject = () =>
      sh(`${env} aws --endpoint-url ${server.endpoint} s3api head-object --bucket bkt --key f --query ContentLength 2>&1`);
    let head = await headObject();
    if (extra.includes('--write-back')) {
      // With --write-back the close put the 20 MB in the local journal, whose upload may not have
      // run before the crash: the next start uploads it (SEMANTICS "Write-back"). What must never
      // appear is the unfinished append.
      const again = await mountBucket(server, 'bkt', [...extra, '--staging-limit', '6MiB']);
      for (let i = 0; i < 40 && head.out.trim() !== '20000000'; i++) {
        await sh('sleep 0.5');
        head = await headObject();
      }
      expect(head.out.trim(), again.child.output().slice(-3000)).toBe('20000000');
      return;
    }
    expect(head.out.trim(), m.child.output().slice(-3000)).toBe('20000000');
  }, 60_000);
});

// Without --write-back only: with it, a file past --staging-limit that was closed can be appended
// to only while its journal entry is still there (docs/SEMANTICS.md, "Write-back").
describe('mount without --write-back', () => {
  const extra: string[] = [];

  it('chmod, touch and mv between the commands of one redirected group past --staging-limit', async () => {
    // SEMANTICS "UploadPartCopy": a chmod, chown, touch or rename of the file meanwhile is not
    // another client's change: the append goes on from the copy it made.
    if (!fuseAvailable()) return;
    const server = await startS3rver({ buckets: ['bkt'] });
    const m = await mountBucket(server, 'bkt', [...extra, '--staging-limit', '6MiB']);
    const r = await sh(
      [
        'set -e',
        '{ head -c 20000000 /dev/zero; chmod 600 f; touch -d @1700000000 f; printf more; mv f g; printf tail; } > f',
        'sleep 1',
        'stat -c "%s %a" g',
        'tail -c 8 g; echo',
        'ls -A',
      ].join('\n'),
      m.dir,
    );
    expect(r).toEqual({ code: 0, out: '20000008 600\nmoretail\ng\n' });
  }, 60_000);

  it('an append a second after a close of a file past --staging-limit goes on, whenever its upload ends', async () => {
    // SEMANTICS: "an append right after that close() goes on as a stream too", whenever the
    // upload of the close ended.
    if (!fuseAvailable()) return;
    const server = await startS3rver({ buckets: ['bkt'] });
    const m = await mountBucket(server, 'bkt', [...extra, '--staging-limit', '6MiB']);
    const r = await sh(
      ['set -e', '{ head -c 20000000 /dev/zero; sleep 1 3>&-; printf more; } > f', 'stat -c %s f'].join('\n'),
      m.dir,
    );
    expect(r).toEqual({ code: 0, out: '20000004\n' });
  }, 60_000);
});
