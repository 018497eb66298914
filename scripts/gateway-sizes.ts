// The gateway against Varnish and nginx on one cached object at a time, at each size of the
// bench's CVMFS-like mix (4 KiB to 8 MiB), taking turns: where the mix's difference between the
// proxies comes from. Peers as the bench configures them (bench/gateway/peers.ts), each object
// fetched twice through each before measuring, then wrk -t2 -c50 for --seconds per peer, round
// after round. Prints req/s and the server's CPU per request (all its processes, /proc).
// Results: docs/BENCHMARKING.md, "The mix, one size at a time".
//
//   node scripts/gateway-sizes.ts [--rounds 2] [--seconds 5] [--only 5,6]   (--only: chunk indices)

import { chmodSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runWrk } from '../bench/gateway/load.ts';
import { startBenchOrigin } from '../bench/gateway/origin.ts';
import { estuaryReversePeer, nginxPeer, varnishPeer } from '../bench/gateway/peers.ts';
import { treeCpuSeconds } from '../bench/proc.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '2' }, seconds: { type: 'string', default: '5' }, only: { type: 'string' } },
});
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const origin = await startBenchOrigin(4096, 100 * 2 ** 20, false);
// Varnish drops to its own user: it must be able to read its directory.
const scratch = join(tmpdir(), 'estuary-gateway-sizes');
mkdirSync(scratch, { recursive: true });
chmodSync(scratch, 0o755);
const prefix = '/x/cvmfs/repo.example.org';
/** The mix's chunks 0 to 6 have its seven sizes (bench/gateway/origin.ts). */
const chunks = (values.only?.split(',').map(Number) ?? [0, 1, 2, 3, 4, 5, 6]).map((i) => `chunk${i}`);
const peers = [];
try {
  let port = 18_300;
  for (const spec of [estuaryReversePeer, varnishPeer, nginxPeer]) {
    const dir = mkdtempSync(join(scratch, 'p-'));
    chmodSync(dir, 0o755);
    const peer = await spec.start(dir, port++, origin.port);
    peers.push({ peer, dir });
    for (let k = 0; k < 2; k++) {
      for (const c of chunks) await (await fetch(`http://127.0.0.1:${peer.port}${prefix}/${c}`)).arrayBuffer();
    }
  }
  console.log(`load average at the start: ${load()}`);
  for (const c of chunks) {
    const size = origin.mix.get(c)!.length;
    for (let r = 1; r <= Number(values.rounds); r++) {
      const line = [];
      for (const { peer, dir } of peers) {
        const before = treeCpuSeconds(peer.pid!);
        const w = await runWrk(peer, dir, [`${prefix}/${c}`], 50, Number(values.seconds));
        const us = ((treeCpuSeconds(peer.pid!) - before) * 1e6) / w.requests;
        line.push(`${peer.name} ${Math.round(w.requestsPerSec)} req/s ${Math.round(us)} µs`);
      }
      console.log(`${size} B, round ${r}: ${line.join(' | ')}`);
    }
  }
  console.log(`load average at the end: ${load()}`);
} finally {
  for (const { peer } of peers) await peer.stop();
  await origin.close();
}
