// The shape the test doubles that wrap another ObjectClient share: every call goes through one
// hook before it (with the bytes it sends) and, for reads, one after it (with the bytes it got),
// then on to the wrapped client. A wrapper states what it adds in those two hooks only.

import type {
  ByteRange,
  CompletedPart,
  ListOptions,
  ListPage,
  ObjectClient,
  ObjectHead,
  PendingUpload,
  OnPiece,
  WriteOptions,
} from './object-client.ts';

export type Operation = keyof ObjectClient;

export abstract class WrappingClient implements ObjectClient {
  protected readonly inner: ObjectClient;

  constructor(inner: ObjectClient) {
    this.inner = inner;
  }

  /** Runs before every call; `key` is the key, the prefix listed or the copy's source. */
  protected abstract before(op: Operation, key: string, bytesSent: number): Promise<void>;

  /** Runs after a call that returned object bytes. */
  protected async after(_op: Operation, _key: string, _bytesReceived: number): Promise<void> {}

  async head(key: string): Promise<ObjectHead | undefined> {
    await this.before('head', key, 0);
    return this.inner.head(key);
  }
  async get(key: string, range?: ByteRange): Promise<Buffer> {
    await this.before('get', key, 0);
    const body = await this.inner.get(key, range);
    await this.after('get', key, body.length);
    return body;
  }
  async getPieces(key: string, range: ByteRange, onPiece: OnPiece): Promise<number> {
    // One piece, the whole body, after the wrapper's own delay or fault.
    const body = await this.get(key, range);
    if (body.length > 0) onPiece(body);
    return body.length;
  }
  async getWithHead(key: string, range: ByteRange): Promise<{ body: Buffer; head: ObjectHead }> {
    await this.before('getWithHead', key, 0);
    const r = await this.inner.getWithHead(key, range);
    await this.after('getWithHead', key, r.body.length);
    return r;
  }
  async put(key: string, body: Buffer, options?: WriteOptions): Promise<{ etag: string }> {
    await this.before('put', key, body.length);
    return this.inner.put(key, body, options);
  }
  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    await this.before('list', prefix, 0);
    return this.inner.list(prefix, options);
  }
  async delete(key: string): Promise<void> {
    await this.before('delete', key, 0);
    return this.inner.delete(key);
  }
  async deleteMany(keys: readonly string[]): Promise<void> {
    await this.before('deleteMany', keys[0] ?? '', 0);
    return this.inner.deleteMany(keys);
  }
  async copy(source: string, target: string, options?: WriteOptions): Promise<{ etag: string }> {
    await this.before('copy', source, 0);
    return this.inner.copy(source, target, options);
  }
  async createMultipart(key: string, options?: WriteOptions): Promise<string> {
    await this.before('createMultipart', key, 0);
    return this.inner.createMultipart(key, options);
  }
  async uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer): Promise<string> {
    await this.before('uploadPart', key, body.length);
    return this.inner.uploadPart(key, uploadId, partNumber, body);
  }
  async uploadPartCopy(
    key: string,
    uploadId: string,
    partNumber: number,
    source: string,
    range: ByteRange,
  ): Promise<string> {
    await this.before('uploadPartCopy', key, 0);
    return this.inner.uploadPartCopy(key, uploadId, partNumber, source, range);
  }
  async completeMultipart(
    key: string,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<{ etag: string }> {
    await this.before('completeMultipart', key, 0);
    return this.inner.completeMultipart(key, uploadId, parts);
  }
  async abortMultipart(key: string, uploadId: string): Promise<void> {
    await this.before('abortMultipart', key, 0);
    return this.inner.abortMultipart(key, uploadId);
  }
  async listUploads(prefix: string): Promise<PendingUpload[]> {
    await this.before('listUploads', prefix, 0);
    return this.inner.listUploads(prefix);
  }

  storeNow(): number | undefined {
    return this.inner.storeNow?.();
  }
  async checkBucket(prefix?: string): Promise<void> {
    await this.before('checkBucket', prefix ?? '', 0);
    return this.inner.checkBucket(prefix);
  }
}
