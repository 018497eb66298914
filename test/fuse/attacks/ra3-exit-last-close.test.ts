// The stop after SIGTERM counts open files by the releases the kernel sends (fuse/command.ts,
// waitForOpenFiles: fs.openFiles). The mount is detached lazily at the signal; when the last file
// open on it closes, the kernel tears the detached mount down at once and aborts the queued
// RELEASE of that very file (fuse_conn_destroy -> fuse_abort_conn), so the mount never hears of
// that close: it has to learn it from the end of the connection.
//
// docs/SEMANTICS.md, "Mounting, unmounting, fstab": "files still open stay usable until closed,
// and the process exits only when every open file is closed and uploaded — even past
// --shutdown-timeout"; and a stopped mount exits within 2 s whatever handle is left.
//
// 1. A writer closes its file (uploaded) 0.1 s after the SIGTERM: the process exits within 2 s
//    of that close, not after the whole --shutdown-timeout (10 s by default).
// 2. A writer whose close() fails (the store went down: EIO, ESTUARY_FS_UPLOAD_FAILED, the writer
//    is told): the file stays "dirty", yet the process exits once the file is closed; it must not
//    wait for a close the kernel will never send.

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { MiB, startDriver } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

const lines = (out: string) =>
  out
    .split('\n')
    .filter((l) => /stopp|waiting|deadline|unmounted|upload failed|exiting/.test(l))
    .map((l) => l.slice(0, 220))
    .join('\n');

// The kernel's abort races with libfuse's thread reading the queued RELEASE: some rounds hear of
// the close, some do not (on the attack machine about one in two). Each test tries a few rounds.
const ROUNDS = 5;

describe.runIf(fuse.ok && minio.ok)('the stop after SIGTERM, once the last open file is closed', () => {
  it('a writer that closes (uploaded) right after the SIGTERM: the process exits within 2 s of that close', { timeout: 120_000 }, async () => {
    const server = await startMinio({ buckets: ['ra3'] });
    const src = `${await tempDir('estuary-ra3-src-')}/src`;
    await writeFile(src, randomBytes(8 * MiB));
    const rounds: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const m = await mountBucket(server, 'ra3');
      const d = await startDriver();
      const { fd } = await d.cmd({ op: 'create', path: `${m.dir}/f${i}` });
      expect((await d.cmd({ op: 'write', fd, src, from: 0, len: 4 * MiB })).err).toBeUndefined();
      m.child.proc.kill('SIGTERM');
      await m.child.waitFor(/"msg":"stopping"/, 10_000);
      expect((await d.cmd({ op: 'write', fd, src, from: 4 * MiB, len: 4 * MiB })).err).toBeUndefined();
      expect((await d.cmd({ op: 'close', fd })).err).toBeUndefined();
      const closed = Date.now();
      const exit = await Promise.race([m.child.exited, sleep(20_000).then(() => 'still running')]);
      const after = Date.now() - closed;
      rounds.push(`round ${i}: exit ${exit} ${after} ms after the close`);
      if (exit !== 0 || after >= 2000) {
        rounds.push(`log:\n${lines(m.child.output())}`);
        break;
      }
    }
    expect(rounds.join('\n')).not.toMatch(/still running|exit (?!0 )|\d{4,} ms/);
  });

  it('a writer whose close() failed (store down): the process still exits, with status 1 and a log line saying so', { timeout: 300_000 }, async () => {
    const src = `${await tempDir('estuary-ra3-src-')}/src`;
    await writeFile(src, randomBytes(MiB));
    const rounds: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const server = await startMinio({ buckets: ['ra3'] });
      const m = await mountBucket(server, 'ra3', ['--retries', '1', '--request-timeout', '2s', '--shutdown-timeout', '1s']);
      const d = await startDriver();
      const { fd } = await d.cmd({ op: 'create', path: `${m.dir}/f` });
      expect((await d.cmd({ op: 'write', fd, src, from: 0, len: MiB })).err).toBeUndefined();
      m.child.proc.kill('SIGTERM');
      await m.child.waitFor(/"msg":"stopping"/, 10_000);
      await server.kill();
      // The writer is told: its file was not stored.
      expect((await d.cmd({ op: 'close', fd }, 60_000)).err).toBe('EIO');
      const exit = await Promise.race([m.child.exited, sleep(20_000).then(() => 'still running 20 s after the close')]);
      const said = /could not be uploaded|upload failed|UPLOAD_FAILED|was not written/.test(m.child.output());
      rounds.push(`round ${i}: exit ${exit}${said ? '' : ', the log says nothing of the lost file'}`);
      if (typeof exit === 'string' || exit !== 1 || !said) {
        rounds.push(`log:\n${lines(m.child.output())}`);
        break;
      }
    }
    expect(rounds.join('\n')).not.toMatch(/still running|exit (?!1\b)|says nothing/);
  });
});
