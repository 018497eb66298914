// The reference line of the gateway scenario, run as its own process: a bare node:http server
// with as many node:cluster workers as the gateway has, answering the origin's objects (same
// bytes, same headers) from memory. No cache, no proxying, no freshness: what Node's HTTP server
// alone costs per request, the floor under any gateway written on it.
//
// Usage: node reference-server.ts PORT SMALL_BYTES BIG_BYTES QUICK(0|1) WORKERS

import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { BIG_SEED, mixRecipes, objectHeaders, pattern, SMALL_SEED } from './origin.ts';

const [port, smallBytes, bigBytes, quick, workers] = process.argv.slice(2).map(Number);

function serve(): void {
  const recipes = mixRecipes(quick === 1);
  recipes.set('small', { size: smallBytes!, seed: SMALL_SEED });
  recipes.set('big', { size: bigBytes!, seed: BIG_SEED });
  // Built on first ask, once per worker: the bench warms every object before it measures.
  const bodies = new Map<string, { body: Buffer; headers: Record<string, string | number> }>();
  // Node's server as the gateway configures it (gateway/server.ts): bodyless requests start ended.
  const server = createServer({ optimizeEmptyRequests: true }, (req, res) => {
    const path = req.url ?? '/';
    const name = path.slice(path.lastIndexOf('/') + 1);
    let hit = bodies.get(name);
    if (!hit) {
      const recipe = recipes.get(name);
      if (!recipe) {
        res.writeHead(404, { 'content-length': 0 });
        res.end();
        return;
      }
      const body = pattern(recipe.size, recipe.seed);
      hit = { body, headers: objectHeaders(name, body.length) };
      bodies.set(name, hit);
    }
    res.writeHead(200, hit.headers);
    res.end(hit.body);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, '127.0.0.1');
}

if (cluster.isPrimary) {
  for (let i = 0; i < workers!; i++) cluster.fork();
  // A worker that dies ends the reference: a column with a dead worker would measure nothing.
  cluster.on('exit', () => process.exit(1));
  const stop = () => {
    cluster.removeAllListeners('exit');
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
} else {
  serve();
}
