// Two (or more) estuary trees' gateways side by side on the bench's CVMFS-like mix, or on one
// object, interleaved: each tree's gateway in reverse mode with the bench's peer configuration
// (bench/gateway/peers.ts: --workers 2, --mem-cache 256MiB split, --disk-cache 4GiB) in front of
// the bench's origin, every mix object fetched twice through each, then wrk -t2 -c50 against each
// in turn, round after round. Prints req/s and the server's CPU per request (all its processes,
// /proc) per round, and the load average. What a change does to the gateway, apart from the peers.
// Results: docs/BENCHMARKING.md, "Disk hits from the page cache".
//
//   node scripts/gateway-trees.ts /work/main . [--rounds 3] [--seconds 8] [--path /x/small]
//
// A tree is a checkout with node_modules (and lib/native built); --path loads one object instead
// of the mix (the origin answers a 4 KiB body for any path ending in /small).

import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runWrk } from '../bench/gateway/load.ts';
import { startBenchOrigin } from '../bench/gateway/origin.ts';
import { estuaryIn } from '../bench/gateway/peers.ts';
import { treeCpuSeconds } from '../bench/proc.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '8' }, path: { type: 'string' } },
});
if (positionals.length < 2) {
  console.error('usage: node scripts/gateway-trees.ts TREE TREE... [--rounds N] [--seconds S] [--path P]');
  process.exit(2);
}
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const origin = await startBenchOrigin(4096, 100 * 2 ** 20, false);
const scratch = join(tmpdir(), 'estuary-gateway-trees');
mkdirSync(scratch, { recursive: true });
const prefix = '/x/cvmfs/repo.example.org';
const targets: string[] = [];
let rank = 0;
for (const name of origin.mix.keys()) {
  const weight = name.startsWith('.cvmfs') ? 20 : name.startsWith('catalog') ? 10 : Math.max(1, Math.floor(20 / ++rank));
  for (let i = 0; i < weight; i++) targets.push(`${prefix}/${name}`);
}
const gateways = [];
try {
  for (const [i, tree] of positionals.entries()) {
    const dir = mkdtempSync(join(scratch, 'g-'));
    const port = 18_200 + i;
    const peer = await estuaryIn(`tree${i}`, 'reverse', join(resolve(tree), 'bin/estuary.js')).start(dir, port, origin.port);
    for (let k = 0; k < 2; k++) {
      for (const name of origin.mix.keys()) await (await fetch(`http://127.0.0.1:${port}${prefix}/${name}`)).arrayBuffer();
    }
    gateways.push({ tree, dir, peer });
  }
  console.log(`load average at the start: ${load()}`);
  for (let r = 1; r <= Number(values.rounds); r++) {
    for (const g of gateways) {
      const before = treeCpuSeconds(g.peer.pid!);
      const w = await runWrk(g.peer, g.dir, values.path ? [values.path] : targets, 50, Number(values.seconds));
      const us = ((treeCpuSeconds(g.peer.pid!) - before) * 1e6) / w.requests;
      console.log(`round ${r} ${g.tree}: ${Math.round(w.requestsPerSec)} req/s, ${Math.round(us)} µs CPU per request (load ${load()})`);
    }
  }
} finally {
  for (const g of gateways) await g.peer.stop();
  await origin.close();
}
