// Entry point of the relay as its own process, so its timers and copies do not compete with the
// bench's own event loop. Usage: node relay-main.ts LISTEN_HOST TARGET_HOST TARGET_PORT RTT_MS WINDOW
// Prints "relay listening on HOST:PORT" and runs until SIGTERM.

import { startRelay } from './relay.ts';

const [listenHost, targetHost, targetPort, rttMs, windowBytes] = process.argv.slice(2);
const relay = await startRelay({
  listenHost: listenHost!,
  listenPort: 0,
  targetHost: targetHost!,
  targetPort: Number(targetPort),
  rttMs: Number(rttMs),
  windowBytes: Number(windowBytes),
});
process.stdout.write(`relay listening on ${listenHost}:${relay.port}\n`);
const stop = () => {
  relay.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
