// The S3 test servers themselves: the shared smoke suite against s3rver, Swift and MinIO, and the
// Swift harness's lifecycle (kill mid-run, restart on the same data, nothing left behind).

import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { onTeardown, runTeardowns } from './cleanup.ts';
import { minioAvailable, startMinio } from './minio.ts';
import { MINIO_QUIRKS, S3RVER_QUIRKS, s3Client, s3SmokeSuite, SWIFT_QUIRKS } from './s3-smoke.ts';
import { startS3rver } from './s3rver.ts';
import { SWIFT_APT_INSTALL, SWIFT_LAUNCHER, SWIFT_PYTHON, startSwift, swiftAvailable } from './swift.ts';

// cleanup.ts registers its afterAll lazily, on the first onTeardown; that call happens inside
// beforeAll or a test, where vitest no longer collects hooks, so the file registers it itself.
afterAll(runTeardowns);

const MiB = 1024 * 1024;
const swift = await swiftAvailable();
const minio = await minioAvailable();

s3SmokeSuite('s3rver', startS3rverWithDes, S3RVER_QUIRKS);

/**
 * s3rver encrypts ListObjectsV2 continuation tokens with DES, which OpenSSL 3 only offers through
 * its legacy provider, on Node 24 as on Node 20; startS3rver passes the flag before Node 22 only.
 * Until it always does, the environment carries it to the s3rver process spawned here.
 */
async function startS3rverWithDes() {
  const previous = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${previous ?? ''} --openssl-legacy-provider`.trim();
  try {
    return await startS3rver();
  } finally {
    if (previous === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = previous;
  }
}

describe.runIf(minio.ok)('MinIO', () => {
  s3SmokeSuite('minio', () => startMinio(), MINIO_QUIRKS);

  it('kill() stops it: its clients are refused', async () => {
    const server = await startMinio({ buckets: ['gone'] });
    const s3 = s3Client(server);
    await s3.send(new PutObjectCommand({ Bucket: 'gone', Key: 'k', Body: 'x' }));
    await server.kill();
    await expect(s3.send(new GetObjectCommand({ Bucket: 'gone', Key: 'k' }))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe.runIf(existsSync(SWIFT_PYTHON))('Swift launcher without Swift', () => {
  it('names the apt-get command that installs it', async () => {
    // -S hides the system site-packages, where the Debian packages put the swift module.
    const run = (cmd: string) =>
      new Promise<{ code: number; stderr: string }>((resolve) => {
        execFile(SWIFT_PYTHON, ['-S', SWIFT_LAUNCHER, cmd, tmpdir()], (err, _out, stderr) =>
          resolve({ code: err ? Number(err.code) : 0, stderr }),
        );
      });
    for (const cmd of ['check', 'run']) {
      const { code, stderr } = await run(cmd);
      expect(code).toBe(1);
      expect(stderr).toContain(SWIFT_APT_INSTALL);
    }
  });
});

describe.runIf(swift.ok)('Swift', () => {
  s3SmokeSuite('swift', () => startSwift(), SWIFT_QUIRKS);

  it('kill() breaks an upload in flight; a Swift restarted on the same directory and port has the objects', async () => {
    const first = await startSwift({ buckets: ['keep'] });
    const s3 = s3Client(first);
    await s3.send(new PutObjectCommand({ Bucket: 'keep', Key: 'k', Body: 'survives' }));
    // The proxy's forked workers must die with it (group SIGKILL, and their parent-death signal
    // besides); a surviving worker would hold this upload open and the test would time out.
    let pulls = 0;
    const slow = new Readable({
      read() {
        pulls += 1;
        if (pulls === 1) this.push(Buffer.alloc(MiB)); // then hold the rest back
      },
    });
    const put = s3.send(
      new PutObjectCommand({ Bucket: 'keep', Key: 'half', Body: slow, ContentLength: 8 * MiB }),
    );
    put.catch(() => undefined); // asserted after the kill
    await waitUntil(() => pulls > 0, 5000);
    await first.kill();
    await expect(put).rejects.toThrow();
    slow.destroy();
    expect(alive(Object.values(first.pids))).toEqual([]);
    await expect(s3.send(new GetObjectCommand({ Bucket: 'keep', Key: 'k' }))).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });

    // The settings docs/TESTING.md promises, as the servers read them.
    const proxyConf = readFileSync(join(first.dataDir, 'etc', 'proxy-server.conf'), 'utf8');
    const objectConf = readFileSync(join(first.dataDir, 'etc', 'object-server.conf'), 'utf8');
    for (const line of ['workers = 2', 'object_chunk_size = 1048576', 'client_chunk_size = 1048576']) {
      expect(proxyConf).toContain(line);
    }
    for (const line of ['workers = 2', 'network_chunk_size = 1048576', 'mount_check = false']) {
      expect(objectConf).toContain(line);
    }
    expect(readFileSync(first.logFile, 'utf8')).toMatch(/proxy-server: .* PUT \/keep\/k\b/);

    // Back on the same port, so the client from before (a mount, in other tests) carries on.
    const second = await startSwift({ dataDir: first.dataDir, port: first.port });
    const got = await s3.send(new GetObjectCommand({ Bucket: 'keep', Key: 'k' }));
    expect(await got.Body!.transformToString()).toBe('survives');
    await second.stop();
    expect(alive(Object.values(second.pids))).toEqual([]);
  });

  it('refuses a proxy port that is taken, saying which', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    onTeardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const { port } = holder.address() as AddressInfo;
    await expect(startSwift({ port })).rejects.toThrow(`127.0.0.1:${port} is already in use`);
  });

  it('leaves no server running when the launcher itself is SIGKILLed', async () => {
    const server = await startSwift({ workers: 1 });
    await server.child.stop('SIGKILL');
    // The kernel delivers the parent-death signals asynchronously; give it a moment.
    await waitUntil(() => alive(Object.values(server.pids)).length === 0, 5000);
  });
});

/**
 * Live (not zombie) processes in the given process groups: the servers and their forked workers.
 * Orphans that died are reparented to an init that may never reap them, so zombies don't count.
 */
function alive(groups: readonly number[]): number[] {
  const live: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // Fields after the command name: state, ppid, pgrp, ...
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state !== 'Z' && groups.includes(Number(pgrp))) live.push(Number(entry));
  }
  return live;
}

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
