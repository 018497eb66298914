// The mount process short of file descriptors (a service's LimitNOFILE, a container's ulimit)
// while an application holds many files open that each need a staging file in the mount process
// (docs/SEMANTICS.md, "write, everything else": a write out of order moves the file to a staging
// file). The operations that need a descriptor may fail then (EMFILE); the mount as a whole must
// not.
//
// What happens, two ways:
// - New files: fuse/adapter.ts binding() loads fuse-native's addon again through node-gyp-build
//   on every create, mkdir, symlink, mknod and rename (caller(), fuse_native_hiding(), ...); that
//   lookup lists the package's build directories, finds none short of descriptors and throws "No
//   native build was found" synchronously inside the FUSE callback: an uncaught exception, the
//   mount process exits 1 at once. Every open file is cut (writers get ENOTCONN), the mountpoint is
//   left dead.
// - Existing files (no create): the unmount watch (fuse/mount-table.ts isMounted) takes the failed
//   read of /proc/mounts for "not mounted", and the mount stops on its own ("stopping", signal
//   "unmounted from outside"; nobody unmounted it). The stop's first sessionEnded() goes through
//   binding() and throws the same error: "error while stopping", "stopped", exit 0 two
//   milliseconds later, with 68 files open and their writes never uploaded, and a dead mountpoint.

import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown, trackPid, untrackPid } from '../../helpers/cleanup.ts';
import { NODE, startChild } from '../../helpers/process.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, serverEnv, sh } from '../mount-helpers.ts';
import { Other } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

const HOLDER = String.raw`
import os, sys, time
d, n, existing = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "existing"
fds = []
errs = {}
for i in range(n):
    try:
        fd = os.open(f"{d}/h{i}", os.O_WRONLY if existing else os.O_WRONLY | os.O_CREAT, 0o644)
        os.pwrite(fd, b"y" * 4096, 65536)
        os.pwrite(fd, b"x" * 4096, 0)
        fds.append(fd)
    except OSError as e:
        errs[e.strerror] = errs.get(e.strerror, 0) + 1
print("HELD", len(fds), errs, flush=True)
sys.stdin.readline()
for fd in fds:
    try:
        os.close(fd)
    except OSError:
        pass
print("CLOSED", flush=True)
`;

describe.runIf(fuse.ok && minio.ok)('the mount process short of file descriptors', () => {
  it('stays up: only the operations short of a descriptor fail (new files)', { timeout: 120_000 }, () => attempt('new'));
  // Existing objects opened for writing (no create, so no addon lookup): what is left is the
  // unmount watch, which takes a failed read of /proc/mounts for an outside unmount.
  it('stays up: only the operations short of a descriptor fail (existing files)', { timeout: 180_000 }, () => attempt('existing'));
});

async function attempt(kind: 'new' | 'existing') {
  {
    const server = await startMinio({ buckets: ['rbkt'] });
    if (kind === 'existing') {
      const other = new Other(server, 'rbkt');
      for (let i = 0; i < 120; i++) await other.put(`h${i}`, Buffer.alloc(8192, 1));
    }
    const dir = await tempDir('estuary-rb-mnt-');
    const bin = new URL('../../../bin/estuary.js', import.meta.url).pathname;
    const child = startChild('prlimit', ['--nofile=96:96', NODE, bin, 'mount', 'rbkt', dir, '--endpoint', server.endpoint, '--log-format', 'json'], {
      env: serverEnv(server),
    });
    onTeardown(async () => {
      if (await isMounted(dir)) await sh(`fusermount -uz '${dir}' || umount -l '${dir}'`);
      await child.stop('SIGKILL');
    });
    await child.waitFor(/"msg":"mounted /, 30_000);
    const script = `${await tempDir('estuary-rb-holder-')}/holder.py`;
    await writeFile(script, HOLDER);
    const holder = spawn('python3', [script, dir, '120', kind], { stdio: ['pipe', 'pipe', 'pipe'] });
    trackPid(holder.pid);
    let out = '';
    holder.stdout.on('data', (b: Buffer) => (out += b.toString()));
    holder.stderr.on('data', (b: Buffer) => (out += b.toString()));
    onTeardown(() => {
      holder.kill('SIGKILL');
      untrackPid(holder.pid);
    });
    for (let i = 0; i < 600 && !/HELD/.test(out); i++) await sleep(100);
    await sleep(3000);
    const stopped = /"msg":"stopping"/.test(child.output());
    const mounted = await isMounted(dir);
    holder.stdin.write('\n');
    for (let i = 0; i < 300 && !/CLOSED/.test(out); i++) await sleep(100);
    await sleep(3000);
    const alive = await Promise.race([child.exited.then((c) => `exited (${c})`), sleep(10).then(() => 'running')]);
    const lines = child.output().split('\n');
    const why = [
      ...lines.filter((l) => /"msg":"(stopping|stopped|unmounted|error while stopping|waiting|some files)/.test(l) || /"level":(50|60)/.test(l)).slice(0, 8),
      ...lines.filter((l) => !l.startsWith('{')).slice(0, 15),
    ].map((l) => l.slice(0, 400));
    const crash = /No native build was found/.test(child.output()) ? 'FAILED ON ITS ADDON LOOKUP ("No native build was found")' : 'no crash';
    const report = `holder: ${out.trim().split('\n')[0]}; mount process: ${crash}; 3 s later the mount had ${stopped ? 'BEGUN A STOP' : 'not stopped'} and was ${mounted ? 'mounted' : 'NOT MOUNTED'}; after the files closed it is ${alive}\n${why.join('\n')}`;
    console.log(report);
    expect(report).toMatch(/mount process: no crash; 3 s later the mount had not stopped and was mounted; after the files closed it is running/);
  }
}
