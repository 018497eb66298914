// Wraps an ObjectClient with a per-request latency and a shared bandwidth limit, so readahead and
// parallel uploads can be exercised on a laptop as they behave on a site-to-cloud link. All
// requests share one token bucket, as they would share one link.

import type { ObjectClient } from './object-client.ts';
import { type Operation, WrappingClient } from './wrapping-client.ts';

export interface LinkShape {
  /** Added to every request, as a round trip. */
  readonly latencyMs: number;
  /** Bytes per second over all requests together. */
  readonly bytesPerSecond: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Reads pay their round trip once the body size is known, in after(). */
const READS: ReadonlySet<Operation> = new Set(['get', 'getWithHead']);

export class BandwidthLimitedClient extends WrappingClient {
  private readonly link: LinkShape;
  /** When the link is next free: bytes are serialised through it, as through one pipe. */
  private freeAt = 0;

  constructor(inner: ObjectClient, link: LinkShape) {
    super(inner);
    this.link = link;
  }

  protected async before(op: Operation, _key: string, bytesSent: number): Promise<void> {
    if (!READS.has(op)) await this.transfer(bytesSent);
  }

  protected override async after(_op: Operation, _key: string, bytesReceived: number): Promise<void> {
    await this.transfer(bytesReceived);
  }

  private async transfer(bytes: number): Promise<void> {
    const now = Date.now();
    const start = Math.max(now, this.freeAt);
    this.freeAt = start + (bytes / this.link.bytesPerSecond) * 1000;
    await sleep(this.freeAt - now + this.link.latencyMs);
  }
}
