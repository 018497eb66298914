// Wraps an ObjectClient with a per-request latency and a shared bandwidth limit, so readahead and
// parallel uploads can be exercised on a laptop as they behave on a site-to-cloud link. All
// requests share one token bucket, as they would share one link.

import type {
  ByteRange,
  CompletedPart,
  ListOptions,
  ListPage,
  ObjectClient,
  ObjectHead,
  WriteOptions,
} from './object-client.ts';

export interface LinkShape {
  /** Added to every request, as a round trip. */
  readonly latencyMs: number;
  /** Bytes per second over all requests together. */
  readonly bytesPerSecond: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class BandwidthLimitedClient implements ObjectClient {
  private readonly inner: ObjectClient;
  private readonly link: LinkShape;
  /** When the link is next free: bytes are serialised through it, as through one pipe. */
  private freeAt = 0;

  constructor(inner: ObjectClient, link: LinkShape) {
    this.inner = inner;
    this.link = link;
  }

  private async transfer(bytes: number): Promise<void> {
    const now = Date.now();
    const start = Math.max(now, this.freeAt);
    this.freeAt = start + (bytes / this.link.bytesPerSecond) * 1000;
    await sleep(this.freeAt - now + this.link.latencyMs);
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    await this.transfer(0);
    return this.inner.head(key);
  }
  async get(key: string, range?: ByteRange): Promise<Buffer> {
    const body = await this.inner.get(key, range);
    await this.transfer(body.length);
    return body;
  }
  async getWithHead(key: string, range: ByteRange): Promise<{ body: Buffer; head: ObjectHead }> {
    const r = await this.inner.getWithHead(key, range);
    await this.transfer(r.body.length);
    return r;
  }
  async put(key: string, body: Buffer, options?: WriteOptions): Promise<{ etag: string }> {
    await this.transfer(body.length);
    return this.inner.put(key, body, options);
  }
  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    await this.transfer(0);
    return this.inner.list(prefix, options);
  }
  async delete(key: string): Promise<void> {
    await this.transfer(0);
    return this.inner.delete(key);
  }
  async deleteMany(keys: readonly string[]): Promise<void> {
    await this.transfer(0);
    return this.inner.deleteMany(keys);
  }
  async copy(source: string, target: string, options?: WriteOptions): Promise<{ etag: string }> {
    await this.transfer(0);
    return this.inner.copy(source, target, options);
  }
  async createMultipart(key: string, options?: WriteOptions): Promise<string> {
    await this.transfer(0);
    return this.inner.createMultipart(key, options);
  }
  async uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer): Promise<string> {
    await this.transfer(body.length);
    return this.inner.uploadPart(key, uploadId, partNumber, body);
  }
  async uploadPartCopy(
    key: string,
    uploadId: string,
    partNumber: number,
    source: string,
    range: ByteRange,
  ): Promise<string> {
    await this.transfer(0);
    return this.inner.uploadPartCopy(key, uploadId, partNumber, source, range);
  }
  async completeMultipart(
    key: string,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<{ etag: string }> {
    await this.transfer(0);
    return this.inner.completeMultipart(key, uploadId, parts);
  }
  async abortMultipart(key: string, uploadId: string): Promise<void> {
    await this.transfer(0);
    return this.inner.abortMultipart(key, uploadId);
  }
  async checkBucket(): Promise<void> {
    await this.transfer(0);
    return this.inner.checkBucket();
  }
}
