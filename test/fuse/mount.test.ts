// Real FUSE mounts against s3rver: the everyday tools (cp, dd, ls -l, find, mv, mkdir, rm -r, tar,
// git) and what happens when the server or the mount goes away.

import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMounted } from '../../fuse/mount-table.ts';
import { onTeardown, runTeardowns } from '../helpers/cleanup.ts';
import { NODE } from '../helpers/process.ts';
import { type S3rverServer, startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { fuseAvailable, type Mounted, mountBucket, runEstuary, serverEnv, sh } from './mount-helpers.ts';
import { storeClient } from './s3/client.ts';
import { throttlingProxy } from './s3/throttling-proxy.ts';

afterAll(runTeardowns);

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe.runIf(fuseAvailable().ok)('estuary mount on a real FUSE mount', () => {
  let server: S3rverServer;
  let m: Mounted;
  let local: string;

  beforeAll(async () => {
    server = await startS3rver({ buckets: ['mnt'] });
    m = await mountBucket(server, 'mnt');
    local = await tempDir('estuary-local-');
  });

  it('copies files in and out with cp and shows them with ls -l', async () => {
    const data = randomBytes(20 * 2 ** 20 + 123);
    await writeFile(join(local, 'in.bin'), data);
    const r = await sh(
      `cp in.bin '${m.dir}/in.bin' && cp '${m.dir}/in.bin' out.bin && ls -l '${m.dir}'`,
      local,
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/-rw-r--r-- 1 \S+ \S+ 20971643 .* in\.bin/);
    expect(md5(await readFile(join(local, 'out.bin')))).toBe(md5(data));
    const stored = await storeClient(server, 'mnt').get('in.bin');
    expect(md5(stored)).toBe(md5(data));
  });

  it('writes in place with dd (random writes and appends)', async () => {
    const r = await sh(
      [
        `cd '${m.dir}'`,
        'printf "hello world" > f.txt',
        'printf "J" | dd of=f.txt bs=1 seek=6 conv=notrunc status=none',
        'printf "!!" >> f.txt',
        'dd if=/dev/zero of=z.bin bs=1M count=3 status=none',
        'cat f.txt',
      ].join(' && '),
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toBe('hello Jorld!!');
    expect((await storeClient(server, 'mnt').get('f.txt')).toString()).toBe('hello Jorld!!');
  });

  it('makes, finds, renames and removes trees', async () => {
    const r = await sh(
      [
        `cd '${m.dir}'`,
        'mkdir -p t/a/b t/c',
        'echo 1 > t/a/b/one && echo 2 > t/c/two',
        'mv t/c/two t/c/deux',
        'mv t/a t/z',
        'find t | sort',
        'rm -r t',
        'test ! -e t && echo gone',
      ].join(' && '),
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out.trim().split('\n')).toEqual(['t', 't/c', 't/c/deux', 't/z', 't/z/b', 't/z/b/one', 'gone']);
  });

  it('extracts a tar archive with modes and symlinks intact; touch -d sets times', async () => {
    const src = join(local, 'tree');
    const r = await sh(
      [
        `mkdir -p '${src}/d/e' && cd '${src}'`,
        'echo x > d/x && echo y > d/e/y && chmod 750 d/x && ln -s e/y d/link',
        'touch -d "2001-02-03 04:05:06" d/e/y',
        `tar -cf '${local}/t.tar' d`,
        `mkdir '${m.dir}/untar' && tar -xf '${local}/t.tar' -C '${m.dir}/untar'`,
        `diff -r '${src}/d' '${m.dir}/untar/d'`,
        `cp d/e/y '${m.dir}/untar/y-kept' && touch -d '2001-02-03 04:05:06' '${m.dir}/untar/y-kept'`,
        `stat -c '%a %Y' '${m.dir}/untar/d/x' '${m.dir}/untar/y-kept'`,
        `readlink '${m.dir}/untar/d/link'`,
      ].join(' && '),
    );
    expect(r.code, r.out).toBe(0);
    const lines = r.out.trim().split('\n');
    expect(lines[0]).toMatch(/^750 /);
    expect(lines[1]).toBe(`644 ${Date.parse('2001-02-03T04:05:06Z') / 1000}`);
    expect(lines[2]).toBe('e/y');
    const head = await storeClient(server, 'mnt').head('untar/d/x');
    expect(head?.metadata.mode).toBe(String(0o100750));
    expect((await storeClient(server, 'mnt').head('untar/y-kept'))?.metadata.mtime).toBe('981173106');
  });

  it('keeps the modification time cp -p sets, distinct from the access time', async () => {
    const r = await sh(
      [
        `echo times > '${local}/timed'`,
        `touch -a -d '2010-01-01 00:00:00' '${local}/timed'`,
        `touch -m -d '2005-06-07 08:09:10' '${local}/timed'`,
        `cp -p '${local}/timed' '${m.dir}/timed-kept'`,
        `stat -c '%Y' '${m.dir}/timed-kept'`,
      ].join(' && '),
    );
    expect(r.code, r.out).toBe(0);
    const mtime = Date.parse('2005-06-07T08:09:10Z') / 1000;
    expect(r.out.trim()).toBe(String(mtime));
    expect((await storeClient(server, 'mnt').head('timed-kept'))?.metadata.mtime).toBe(String(mtime));
  });

  it('keeps mode and mtime with cp -p also for a file large enough for a multipart upload', async () => {
    const r = await sh(
      [
        `head -c 20000000 /dev/urandom > '${local}/big-timed'`,
        `chmod 600 '${local}/big-timed'`,
        `touch -m -d '2004-05-06 07:08:09' '${local}/big-timed'`,
        `cp -p '${local}/big-timed' '${m.dir}/big-timed'`,
        `stat -c '%a %Y %s' '${m.dir}/big-timed'`,
        `cmp '${local}/big-timed' '${m.dir}/big-timed'`,
      ].join(' && '),
    );
    expect(r.code, r.out).toBe(0);
    const mtime = Date.parse('2004-05-06T07:08:09Z') / 1000;
    expect(r.out.trim()).toBe(`600 ${mtime} 20000000`);
    const head = await storeClient(server, 'mnt').head('big-timed');
    expect(head?.metadata).toMatchObject({ mtime: String(mtime), mode: String(0o100600) });
  });

  it('clones a git repository into the mount', async () => {
    const repo = join(local, 'repo');
    const r = await sh(
      [
        `git init -q '${repo}' && cd '${repo}'`,
        'git config user.email t@example.org && git config user.name t',
        'for i in 1 2 3; do echo "line $i" > "f$i.txt"; git add .; git commit -qm "c$i"; done',
        `git clone -q '${repo}' '${m.dir}/clone'`,
        `cd '${m.dir}/clone' && git status --porcelain && git log --oneline | wc -l && git fsck --no-progress`,
      ].join(' && '),
      undefined,
      180_000,
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out.trim()).toBe('3');
  });

  it('takes concurrent writers without mixing their data', async () => {
    const r = await sh(
      [
        `cd '${m.dir}'`,
        'for i in 1 2 3 4; do (head -c 9000000 /dev/urandom > "/tmp/cw$$-$i" && cp "/tmp/cw$$-$i" "cw$i") & done; wait',
        'for i in 1 2 3 4; do cmp "/tmp/cw$$-$i" "cw$i" || exit 1; rm "/tmp/cw$$-$i"; done',
        'echo same',
      ].join(' && '),
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out.trim()).toBe('same');
  });

  it('keeps reading a file removed while open, as a local filesystem does', async () => {
    const r = await sh(
      `cd '${m.dir}' && head -c 3000000 /dev/urandom > u.bin && md5sum < u.bin && exec 3< u.bin && rm u.bin && ` +
        'test ! -e u.bin && md5sum <&3',
    );
    expect(r.code, r.out).toBe(0);
    const [before, after] = r.out.trim().split('\n');
    expect(after).toBe(before);
  });

  it('makes, lists, renames and removes FIFOs and device nodes, stored with s3fs mode metadata', async () => {
    const r = await sh(
      [
        `cd '${m.dir}'`,
        'mkdir sp && mkfifo -m 640 sp/fifo && mknod -m 600 sp/null c 1 3',
        'mv sp/fifo sp/pipe',
        'stat -c "%n %F %a" sp/pipe sp/null',
        'rm sp/pipe sp/null && rmdir sp && echo removed',
      ].join(' && '),
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toBe('sp/pipe fifo 640\nsp/null character special file 600\nremoved\n');
  });

  it('refuses what S3 cannot hold with the documented errno', async () => {
    const long = 'n'.repeat(256);
    const r = await sh(`cd '${m.dir}' && (touch ${long} 2>&1; ln f.txt hard 2>&1; true)`);
    expect(r.out).toMatch(/File name too long/);
    expect(r.out).toMatch(/Operation not permitted/);
    // Past S3's 1024-byte keys, with every name under 255 bytes: a lookup says so as well.
    const deep = Array(4).fill('n'.repeat(250)).join('/');
    const x = 'x'.repeat(30);
    const d = await sh(`cd '${m.dir}' && mkdir -p ${deep} && (stat ${deep}/${x} 2>&1; mkdir ${deep}/${x} 2>&1; true)`);
    expect(d.out.match(/File name too long/g), d.out).toHaveLength(2);
    expect(d.out).not.toMatch(/No such file/);
  });
});

describe.runIf(fuseAvailable().ok)('failures and shutdown', () => {
  it('reports EIO to the writer when the server dies mid-upload', async () => {
    const server = await startS3rver({ buckets: ['dies'] });
    const m = await mountBucket(server, 'dies', ['--retries', '1']);
    // A paced writer (40 MiB over about 2 s), so the server dies with the upload under way
    // however fast this machine is.
    const writing = sh(
      `(for i in $(seq 40); do head -c 1048576 /dev/urandom; sleep 0.05; done) | dd of='${m.dir}/big' bs=1M iflag=fullblock status=none; echo "dd exit $?"`,
    );
    // The server dies once the writer has the file open (on a loaded machine the shell may take
    // seconds to get there, and an open that fails is not what this test is about).
    for (let i = 0; i < 600 && !existsSync(join(m.dir, 'big')); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    await server.kill();
    const r = await writing;
    expect(r.out).toMatch(/Input\/output error/);
    expect(r.out).not.toMatch(/dd exit 0/);
    // The log is written asynchronously; the line may land just after dd has exited.
    await m.child.waitFor(/ESTUARY_FS_UPLOAD_FAILED/, 10_000);
  });

  it('rides out 503 SlowDown through the mount: every byte arrives and comes back', async () => {
    const server = await startS3rver({ buckets: ['slow'] });
    const budget = { refuse: 0, refused: 0 };
    const port = await throttlingProxy(server.port, budget);
    const m = await mountBucket({ ...server, endpoint: `http://127.0.0.1:${port}` }, 'slow');
    const src = join(await tempDir('estuary-slow-'), 'data');
    await writeFile(src, randomBytes(20 * 2 ** 20));
    budget.refuse = 3;
    const up = await sh(`cp '${src}' '${m.dir}/data' && echo copied`);
    expect(up.out.trim(), up.out).toBe('copied');
    budget.refuse = 2;
    const back = await sh(`cmp '${src}' '${m.dir}/data' && echo same`);
    expect(back.out.trim(), back.out).toBe('same');
    expect(budget.refused).toBe(5);
    expect((await storeClient(server, 'slow').get('data')).equals(await readFile(src))).toBe(true);
  });

  it('answers EIO to a reader when the endpoint dies mid-read, and stays mounted', async () => {
    const server = await startS3rver({ buckets: ['gone'] });
    await storeClient(server, 'gone').put('big', randomBytes(96 * 2 ** 20));
    const m = await mountBucket(server, 'gone', ['--retries', '1', '--readahead', '2M']);
    // A slow reader: 1 MiB every 50 ms, so the server dies with most of the file unread. It marks
    // its first MiB read, and the server is killed only after that, however slow the start.
    const started = join(await tempDir('estuary-eio-'), 'started');
    const reader = sh(
      [
        "python3 -c 'import sys, time",
        "f = open(sys.argv[1], \"rb\"); n = 0",
        'try:',
        '    while True:',
        '        b = f.read(1 << 20)',
        '        if not b: break',
        '        n += len(b); time.sleep(0.05)',
        '        if n == len(b): open(sys.argv[2], "w").close()',
        '    print("read all", n)',
        'except OSError as e:',
        `    print("errno", e.errno, n)' '${m.dir}/big' '${started}'`,
      ].join('\n'),
    );
    for (let waited = 0; waited < 20_000 && !(await stat(started).catch(() => undefined)); waited += 50)
      await new Promise((r) => setTimeout(r, 50));
    await server.kill();
    const r = await reader;
    expect(r.out, r.out).toMatch(/^errno 5 \d+/m);
    expect(await isMounted(m.dir)).toBe(true);
    const ls = await sh(`ls '${m.dir}'; echo "ls exit $?"`);
    expect(ls.out).toMatch(/ls exit/);
    expect(m.child.proc.exitCode).toBeNull();
  });

  it('answers ENOSPC when the cache disk is full, and leaves the stored object as it was', async () => {
    const server = await startS3rver({ buckets: ['full'] });
    const original = randomBytes(8 * 2 ** 20);
    await storeClient(server, 'full').put('obj', original);
    const cacheDir = await tempDir('estuary-full-');
    const tmpfs = await sh(`mount -t tmpfs -o size=2m estuary-test-cache '${cacheDir}'`);
    expect(tmpfs.code, tmpfs.out).toBe(0);
    onTeardown(async () => {
      await sh(`umount -l '${cacheDir}'`);
    });
    const m = await mountBucket(server, 'full', ['--cache-dir', cacheDir]);
    // A write into an existing 8 MB object stages the whole object on the 2 MB cache disk.
    const r = await sh(
      `printf X | dd of='${m.dir}/obj' bs=1 seek=7000000 conv=notrunc status=none; echo "dd exit $?"`,
    );
    expect(r.out).toMatch(/No space left on device/);
    expect(r.out).not.toMatch(/dd exit 0/);
    expect((await storeClient(server, 'full').get('obj')).equals(original)).toBe(true);
    const copy = join(await tempDir('estuary-full-local-'), 'obj');
    await writeFile(copy, original);
    const again = await sh(`cmp '${copy}' '${m.dir}/obj' && echo same`);
    expect(again.out.trim(), again.out).toBe('same');
  });

  it('finishes pending uploads before exiting on SIGTERM, and unmounts', async () => {
    const server = await startS3rver({ buckets: ['term'] });
    const m = await mountBucket(server, 'term');
    const data = randomBytes(60 * 2 ** 20);
    const src = join(await tempDir('estuary-term-'), 'f');
    await writeFile(src, data);
    const copying = sh(`cp '${src}' '${m.dir}/f'; echo "cp exit $?"`);
    // Signal only once cp has the file open in the mount, mid-copy.
    while (
      !(await stat(join(m.dir, 'f')).then(
        (s) => s.size > 0,
        () => false,
      ))
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const code = await m.child.stop('SIGTERM', 60_000);
    const r = await copying;
    expect(code).toBe(0);
    expect(r.out).toMatch(/cp exit 0/);
    expect(await isMounted(m.dir)).toBe(false);
    expect(md5(await storeClient(server, 'term').get('f'))).toBe(md5(data));
  });

  it('mounts from fstab through mount.fuse.estuary, read-only with ro', async () => {
    const server = await startS3rver({ buckets: ['fstab'] });
    const dir = await tempDir('estuary-fstab-');
    const logDir = await tempDir('estuary-fstab-log-');
    onTeardown(() => sh(`mountpoint -q '${dir}' && fusermount -uz '${dir}'; true`).then(() => undefined));
    const helper = new URL('../../fuse/bin/mount.fuse.estuary', import.meta.url).pathname;
    const bin = new URL('../../bin/estuary.js', import.meta.url).pathname;
    const env = Object.entries({
      ...serverEnv(server),
      ESTUARY: `${NODE} ${bin}`,
      ESTUARY_MOUNT_LOG: join(logDir, 'mount.log'),
    })
      .map(([k, v]) => `${k}='${v}'`)
      .join(' ');
    const r = await sh(
      `env ${env} '${helper}' fstab '${dir}' -o rw,_netdev,endpoint=${server.endpoint},ro,cache_ttl=5s` +
        ` && (touch '${dir}/x' 2>&1; true) && fusermount -u '${dir}'`,
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/Read-only file system/);
  });

  it('with --write-back, keeps closed files through a mount crash and uploads them on restart', async () => {
    const server = await startS3rver({ buckets: ['wb'] });
    const cacheDir = await tempDir('estuary-wb-cache-');
    const m = await mountBucket(server, 'wb', ['--write-back', '--cache-dir', cacheDir]);
    // List the root first, so the new name's lookup is answered from the cache with the server gone.
    expect((await sh(`ls '${m.dir}'`)).code).toBe(0);
    await server.kill();
    const w = await sh(`printf 'survives a crash' > '${m.dir}/kept.txt' && cat '${m.dir}/kept.txt'`);
    expect(w.code, w.out).toBe(0);
    expect(w.out).toBe('survives a crash');
    await m.child.stop('SIGKILL');
    await sh(`fusermount -uz '${m.dir}'`);

    // The same store at the same address: a journal resumes only there (docs/SEMANTICS.md).
    const again = await startS3rver({ buckets: ['wb'], dataDir: server.dataDir, port: server.port });
    const m2 = await mountBucket(again, 'wb', ['--write-back', '--cache-dir', cacheDir]);
    const client = storeClient(again, 'wb');
    // Wait for the content itself: the resumed journal may publish the file's creation (empty)
    // before its closed content, and an object that exists is not yet the one that was closed.
    let body: Buffer | undefined;
    for (let i = 0; i < 100 && body?.toString() !== 'survives a crash'; i++) {
      body = await client.get('kept.txt').catch(() => undefined);
      if (body?.toString() !== 'survives a crash') await new Promise((r) => setTimeout(r, 100));
    }
    expect(body?.toString()).toBe('survives a crash');
    expect(await m2.child.stop('SIGTERM', 30_000)).toBe(0);
    expect(m2.child.output()).toMatch(/resuming uploads left in the write-back journal/);
  });

  it('exits when unmounted with estuary umount', async () => {
    const server = await startS3rver({ buckets: ['um'] });
    const m = await mountBucket(server, 'um');
    const um = runEstuary(['umount', m.dir], serverEnv(server));
    expect(await um.exited).toBe(0);
    expect(await m.child.exited).toBe(0);
    expect(await isMounted(m.dir)).toBe(false);
  });

  it('says clearly when the bucket is missing or the endpoint is down', async () => {
    const server = await startS3rver({ buckets: ['exists'] });
    const dir = await tempDir('estuary-nomnt-');
    const missing = runEstuary(['mount', 'nope', dir, '--endpoint', server.endpoint], serverEnv(server));
    expect(await missing.exited).toBe(2);
    expect(missing.output()).toMatch(/ESTUARY_FS_NO_BUCKET|bucket "nope" does not exist/);
    const down = runEstuary(
      ['mount', 'exists', dir, '--endpoint', 'http://127.0.0.1:9', '--retries', '1'],
      serverEnv(server),
    );
    expect(await down.exited).toBe(1);
    expect(down.output()).toMatch(/cannot reach the S3 endpoint/);
    expect(down.output()).not.toMatch(/\n\s+at /);
    const stranger = runEstuary(['mount', 'exists', dir, '--endpoint', server.endpoint], {
      ...serverEnv(server),
      AWS_ACCESS_KEY_ID: 'NOBODY',
    });
    expect(await stranger.exited).toBe(2);
    expect(stranger.output()).toMatch(/access to bucket "exists" was denied/);
    const anonymous: NodeJS.ProcessEnv = {
      ...serverEnv(server),
      // Not the mountpoint: the start writes its compile cache under HOME, and a mountpoint that
      // holds files is refused before credentials are looked for.
      HOME: await tempDir('estuary-nohome-'),
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    delete anonymous.AWS_ACCESS_KEY_ID;
    delete anonymous.AWS_SECRET_ACCESS_KEY;
    const nokeys = runEstuary(
      ['mount', 'exists', dir, '--endpoint', server.endpoint, '--retries', '1'],
      anonymous,
    );
    expect(await nokeys.exited).toBe(2);
    expect(nokeys.output()).toMatch(/no S3 credentials found/);
  });
});
