// The Age field (RFC 9111 §5.1). Pure.
//
// Age is a singleton, but senders and intermediaries do produce lists ("7200, 0") and repeated
// lines. The RFC says a cache SHOULD use the first member and ignore the rest, and SHOULD ignore
// a value that is not a non-negative integer ("7200.0", "-1", "1e3"). Using the first member
// rather than treating the list as invalid keeps the larger, older age that the first hop
// recorded, so downstream never over-estimates freshness.

/** The largest delta-seconds a cache must represent; anything above is capped (RFC 9111 §1.2.2). */
const MAX_DELTA = 2 ** 31;

/** Age in seconds, or undefined when absent or invalid (the caller then treats it as 0). */
export function parseAge(value: string | readonly string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value : value[0];
  if (text === undefined) return undefined;
  const firstMember = text.split(',')[0]!.trim();
  if (!/^\d+$/.test(firstMember)) return undefined;
  return Math.min(Number(firstMember), MAX_DELTA);
}
