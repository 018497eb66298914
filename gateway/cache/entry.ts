// What the cache stores about a response besides its body. Shared by both tiers and by the
// freshness rules; the disk store serialises it into each file's trailer.

export interface EntryMeta {
  /** Cache key (gateway/cache/key.ts). */
  readonly key: string;
  /** The absolute URL fetched, for purge by URL or prefix and for the summary. */
  readonly url: string;
  readonly status: number;
  /** End-to-end response headers as received (hop-by-hop ones removed), lower-case names. */
  headers: Record<string, string | string[]>;
  /** When the request that produced this response went out, and when its headers came back (ms). */
  requestTime: number;
  responseTime: number;
  /**
   * The value of the targeted cache-control field (RFC 9213: CDN-Cache-Control, or the site's own
   * field) that governs this cache instead of Cache-Control and Expires; absent when none applied.
   */
  readonly directives?: string;
  /** Body length in bytes. */
  readonly size: number;
  /** Values of the request headers named by Vary, lower-case names; absent when no Vary. */
  readonly vary?: Record<string, string>;
  /** CVMFS repository the object belongs to, for the summary. */
  readonly repo?: string;
  /** A content-addressed object: its bytes were verified and can never change. */
  readonly immutable?: boolean;
  /** Freshness in seconds set by the gateway, not by the response (S3 objects: --s3-revalidate). */
  readonly lifetimeS?: number;
}
