// The endpoint probe (fuse/endpoint-probe.ts) must not refuse real S3 servers: one slower than
// usual but inside the 5 s deadline, reached through an IPv6 literal; Swift's s3api, which leaves
// the unsigned probe to Swift (412 text/html "Bad URL"); MinIO, which refuses it in S3's XML.
// `estuary mount --help`: the first request must be answered "within 5 s, and like S3". Held up
// when attacked: kept as regressions.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { isMounted } from '../../../fuse/mount-table.ts';
import { onTeardown, runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { fuseAvailable, runEstuary, serverEnv, sh } from '../mount-helpers.ts';

afterAll(runTeardowns);

const swift = await swiftAvailable();
const minio = await minioAvailable();

async function tryMount(endpoint: string, env: NodeJS.ProcessEnv) {
  const dir = await tempDir('estuary-atk-probe-');
  const child = runEstuary(['mount', 'kek-data', dir, '--endpoint', endpoint, '--retries', '1'], env);
  onTeardown(async () => {
    if (await isMounted(dir)) await sh(`fusermount -uz '${dir}'`);
  });
  const mounted = await Promise.race([
    child.waitFor(/mounted kek-data/, 40_000).then(() => true, () => false),
    child.exited.then(() => false),
  ]);
  if (mounted) await sh(`fusermount -u '${dir}' || fusermount -uz '${dir}'`);
  const code = await child.stop('SIGTERM', 5000);
  return { mounted, code, out: child.output() };
}

describe.runIf(fuseAvailable().ok)('the endpoint probe, with real servers that are slow or spelled oddly', () => {
  it('mounts s3rver behind a relay on [::1] that holds the first answer for 2.5 s', async () => {
    const s3 = await startS3rver({ buckets: ['kek-data'] });
    let first = true;
    const relay = http.createServer((req, res) => {
      // 2.5 s: slow, and still room under the 5 s deadline on a loaded test machine.
      const delay = first ? 2500 : 0;
      first = false;
      const up = http.request(
        { host: '127.0.0.1', port: s3.port, method: req.method, path: req.url, headers: req.headers },
        (ur) => {
          setTimeout(() => {
            res.writeHead(ur.statusCode ?? 502, ur.headers);
            ur.pipe(res);
          }, delay);
        },
      );
      req.pipe(up);
    });
    await new Promise<void>((r) => relay.listen(0, '::1', r));
    onTeardown(() => new Promise<void>((r) => relay.close(() => r())));
    const endpoint = `http://[::1]:${(relay.address() as AddressInfo).port}`;
    const r = await tryMount(endpoint, serverEnv(s3));
    expect(r.mounted, r.out).toBe(true);
  }, 60_000);

  it.runIf(swift.ok)('mounts Swift with the S3 API', async () => {
    const server = await startSwift({ buckets: ['kek-data'] });
    const r = await tryMount(server.endpoint, serverEnv(server));
    expect(r.mounted, r.out).toBe(true);
  }, 60_000);

  it.runIf(minio.ok)('mounts MinIO', async () => {
    const server = await startMinio({ buckets: ['kek-data'] });
    const r = await tryMount(server.endpoint, serverEnv(server));
    expect(r.mounted, r.out).toBe(true);
  }, 60_000);
});
