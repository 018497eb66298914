import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onTeardown } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { rawRequest, sleep, startGateway } from './gateway-lib.ts';

async function origin(): Promise<number> {
  const srv = http.createServer((req, res) => {
    const u = req.url ?? '';
    setTimeout(() => {
      res.writeHead(200, { 'cache-control': 'max-age=600' });
      res.end(Buffer.alloc(u.includes('big') ? 1 << 20 : 100, 97));
    }, u.includes('slow') ? 1500 : 0);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  onTeardown(() => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }));
  return (srv.address() as net.AddressInfo).port;
}

for (const mode of ['front', 'no-front']) {
  describe(`graceful stop (${mode})`, () => {
    it('a keep-alive connection whose miss was in flight at SIGTERM: answered, then the gateway exits promptly', async () => {
      const o = await origin();
      const g = await startGateway(['--upstream', `o=http://127.0.0.1:${o}`, '--cache-dir', join(await tempDir(), 'c'), ...(mode === 'front' ? [] : ['--no-front-hits'])]);
      const s = net.connect(g.port, '127.0.0.1');
      onTeardown(() => void s.destroy());
      let got = '';
      s.on('data', (d) => (got += d.toString('latin1')));
      s.on('error', () => {});
      await new Promise((r) => s.once('connect', r));
      s.write('GET /o/slow HTTP/1.1\r\nHost: o\r\n\r\n');
      await sleep(300);
      const t0 = Date.now();
      g.child.proc.kill('SIGTERM');
      const code = await Promise.race([g.child.exited, sleep(8000).then(() => 'still running')]);
      const took = Date.now() - t0;
      expect(got).toMatch(/^HTTP\/1\.1 200/);
      expect(code).not.toBe('still running');
      expect(took).toBeLessThan(5000);
    }, 20_000);

    it('a large memory hit being read slowly at SIGTERM arrives whole', async () => {
      const o = await origin();
      const g = await startGateway(['--upstream', `o=http://127.0.0.1:${o}`, '--cache-dir', join(await tempDir(), 'c'), ...(mode === 'front' ? [] : ['--no-front-hits'])]);
      for (let i = 0; i < 8; i++) {
        const r = await rawRequest(g.port, 'GET /o/big HTTP/1.1\r\nHost: o\r\nConnection: close\r\n\r\n');
        if (r.head.includes('detail=memory')) break;
        await sleep(100);
      }
      const s = net.connect(g.port, '127.0.0.1');
      onTeardown(() => void s.destroy());
      const chunks: Buffer[] = [];
      s.on('error', () => {});
      s.on('data', (d) => chunks.push(d));
      await new Promise((r) => s.once('connect', r));
      s.write('GET /o/big HTTP/1.1\r\nHost: o\r\n\r\n'.repeat(6));
      await sleep(50);
      s.pause();
      await sleep(300);
      g.child.proc.kill('SIGTERM');
      await sleep(500);
      s.resume();
      await Promise.race([new Promise((r) => s.once('close', r)), sleep(1500)]);
      const code = await Promise.race([g.child.exited, sleep(3000).then(() => 'still running')]);

      // Whole answers only: each a head and exactly its Content-Length of body.
      let all = Buffer.concat(chunks);
      const statuses: string[] = [];
      while (all.length > 0) {
        const i = all.indexOf('\r\n\r\n');
        if (i < 0) break;
        const head = all.subarray(0, i).toString('latin1');
        const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        statuses.push(`${head.split('\r\n')[0]} ${/detail=\w+/.exec(head)?.[0]} ${Math.min(len, all.length - i - 4)}/${len}`);
        all = all.subarray(Math.min(all.length, i + 4 + len));
      }
      expect(statuses.length).toBeGreaterThan(0);
      for (const st of statuses) expect(st).toMatch(/ (\d+)\/\1$/);
      expect(code).not.toBe('still running');
    }, 20_000);
  });
}
