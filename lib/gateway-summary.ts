// What a gateway says it holds, served at GATEWAY_PATHS.summary and carried by the agent inside
// its heartbeat so discovery can send a worker to the cache that already has its data. Kept
// compact: a heartbeat goes out every 30 s from every cache.

export const GATEWAY_SUMMARY_VERSION = 1;

export interface GatewaySummary {
  readonly version: typeof GATEWAY_SUMMARY_VERSION;
  /** Bytes and objects in each tier. */
  readonly cache: { readonly memoryBytes: number; readonly diskBytes: number; readonly objects: number };
  /** CVMFS repositories (fully qualified names) with bytes cached for each, largest first, at most 32. */
  readonly cvmfs: readonly { readonly repo: string; readonly bytes: number }[];
  /**
   * HTTP origins as host + first path segment, and objects of the gateway's S3 endpoint as
   * s3://bucket/first-segment; largest first, at most 32.
   */
  readonly prefixes: readonly { readonly prefix: string; readonly bytes: number }[];
}

export const SUMMARY_LIMIT = 32;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** The entries of a list whose `key` is a string, with their byte counts; anything else is left out. */
function entries<K extends string>(list: unknown, key: K): ({ readonly bytes: number } & Record<K, string>)[] {
  if (!Array.isArray(list)) return [];
  return list
    .filter((e): e is Record<string, unknown> => isRecord(e) && typeof e[key] === 'string')
    .map((e) => ({ [key]: e[key], bytes: count(e.bytes) }) as { readonly bytes: number } & Record<K, string>);
}

/**
 * A summary as received, checked field by field: a gateway of another version, or one that sent
 * an entry without its name, must cost the heartbeat its holdings at most, never the heartbeat.
 * Undefined when it is not a version-1 summary at all; malformed entries are dropped.
 */
export function parseGatewaySummary(value: unknown): GatewaySummary | undefined {
  if (!isRecord(value) || value.version !== GATEWAY_SUMMARY_VERSION || !isRecord(value.cache)) return undefined;
  const c = value.cache;
  return {
    version: GATEWAY_SUMMARY_VERSION,
    cache: { memoryBytes: count(c.memoryBytes), diskBytes: count(c.diskBytes), objects: count(c.objects) },
    cvmfs: entries(value.cvmfs, 'repo'),
    prefixes: entries(value.prefixes, 'prefix'),
  };
}
