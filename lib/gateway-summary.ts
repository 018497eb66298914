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
