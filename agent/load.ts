// Load, as Shoal defines it: KB/s (1 KB = 1024 bytes) the cache sends to clients. Beside an
// estuary gateway it comes from the gateway's body-bytes counter; beside Squid or Varnish from the
// interface's transmitted bytes. Both are counters, so load is the rate between two readings.
// Pure: parsing text and arithmetic.

/** Sums every sample of `name` in Prometheus text exposition (all label sets). */
export function promCounter(text: string, name: string): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    const valueText = rest[0] === '{' ? rest.slice(rest.lastIndexOf('}') + 1) : rest;
    const v = Number(valueText.trim().split(/\s+/)[0]);
    if (Number.isFinite(v)) total = (total ?? 0) + v;
  }
  return total;
}

/** Transmitted bytes of `iface` from /proc/net/dev text. */
export function netDevTxBytes(text: string, iface: string): number | undefined {
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0 || line.slice(0, colon).trim() !== iface) continue;
    // After the name: 8 receive fields, then transmit bytes.
    const fields = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/);
    const v = Number(fields[8]);
    return Number.isFinite(v) ? v : undefined;
  }
  return undefined;
}

/** The interface of the default route from /proc/net/route text, if any. */
export function defaultRouteInterface(text: string): string | undefined {
  for (const line of text.split('\n').slice(1)) {
    const [iface, destination] = line.trim().split(/\s+/);
    if (destination === '00000000' && iface) return iface;
  }
  return undefined;
}

export interface CounterSample {
  readonly bytes: number;
  readonly atMs: number;
}

/** KB/s between two readings; a counter that went backwards (restart) counts from zero. */
export function rateKBps(prev: CounterSample, cur: CounterSample): number {
  const seconds = (cur.atMs - prev.atMs) / 1000;
  if (seconds <= 0) return 0;
  const delta = cur.bytes >= prev.bytes ? cur.bytes - prev.bytes : cur.bytes;
  return Math.round((delta / 1024 / seconds) * 10) / 10;
}
