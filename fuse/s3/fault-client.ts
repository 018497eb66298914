// Wraps an ObjectClient and fails chosen calls, to test that every failure of the store reaches
// the writer or reader as an error and never as silent loss. Rules match an operation (and
// optionally a key) and fire a given number of times, or until removed.

import type {
  ByteRange,
  CompletedPart,
  ListOptions,
  ListPage,
  ObjectClient,
  ObjectHead,
  WriteOptions,
} from './object-client.ts';
import { ObjectError, type ObjectErrorKind } from './object-client.ts';

export type Operation = Exclude<keyof ObjectClient, never>;

export interface FaultRule {
  readonly op: Operation | '*';
  readonly key?: string | RegExp;
  readonly kind: ObjectErrorKind;
  /** How many calls fail; Infinity until cleared. */
  times: number;
  /** Holds the call this long before failing (or before passing when `kind` is never reached). */
  readonly delayMs?: number;
}

export class FaultInjectingClient implements ObjectClient {
  private readonly inner: ObjectClient;
  private rules: FaultRule[] = [];
  /** Every call made, in order, for assertions. */
  readonly log: { op: Operation; key: string }[] = [];

  constructor(inner: ObjectClient) {
    this.inner = inner;
  }

  fail(op: Operation | '*', kind: ObjectErrorKind = 'unavailable', times = 1, key?: string | RegExp): void {
    this.rules.push({ op, kind, times, key });
  }

  clear(): void {
    this.rules = [];
  }

  private async check(op: Operation, key: string): Promise<void> {
    this.log.push({ op, key });
    const rule = this.rules.find(
      (r) =>
        r.times > 0 &&
        (r.op === '*' || r.op === op) &&
        (r.key === undefined || (typeof r.key === 'string' ? r.key === key : r.key.test(key))),
    );
    if (!rule) return;
    rule.times -= 1;
    if (rule.delayMs) await new Promise((r) => setTimeout(r, rule.delayMs));
    throw new ObjectError(rule.kind, `injected ${rule.kind} on ${op} ${key}`, key);
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    await this.check('head', key);
    return this.inner.head(key);
  }
  async get(key: string, range?: ByteRange): Promise<Buffer> {
    await this.check('get', key);
    return this.inner.get(key, range);
  }
  async getWithHead(key: string, range: ByteRange): Promise<{ body: Buffer; head: ObjectHead }> {
    await this.check('getWithHead', key);
    return this.inner.getWithHead(key, range);
  }
  async put(key: string, body: Buffer, options?: WriteOptions): Promise<{ etag: string }> {
    await this.check('put', key);
    return this.inner.put(key, body, options);
  }
  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    await this.check('list', prefix);
    return this.inner.list(prefix, options);
  }
  async delete(key: string): Promise<void> {
    await this.check('delete', key);
    return this.inner.delete(key);
  }
  async deleteMany(keys: readonly string[]): Promise<void> {
    await this.check('deleteMany', keys[0] ?? '');
    return this.inner.deleteMany(keys);
  }
  async copy(source: string, target: string, options?: WriteOptions): Promise<{ etag: string }> {
    await this.check('copy', source);
    return this.inner.copy(source, target, options);
  }
  async createMultipart(key: string, options?: WriteOptions): Promise<string> {
    await this.check('createMultipart', key);
    return this.inner.createMultipart(key, options);
  }
  async uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer): Promise<string> {
    await this.check('uploadPart', key);
    return this.inner.uploadPart(key, uploadId, partNumber, body);
  }
  async uploadPartCopy(
    key: string,
    uploadId: string,
    partNumber: number,
    source: string,
    range: ByteRange,
  ): Promise<string> {
    await this.check('uploadPartCopy', key);
    return this.inner.uploadPartCopy(key, uploadId, partNumber, source, range);
  }
  async completeMultipart(
    key: string,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<{ etag: string }> {
    await this.check('completeMultipart', key);
    return this.inner.completeMultipart(key, uploadId, parts);
  }
  async abortMultipart(key: string, uploadId: string): Promise<void> {
    await this.check('abortMultipart', key);
    return this.inner.abortMultipart(key, uploadId);
  }
  async checkBucket(): Promise<void> {
    await this.check('checkBucket', '');
    return this.inner.checkBucket();
  }
}
