// An object store held in memory, with S3's listing, range, copy and multipart rules. Shipped
// code, not a test fixture: the filesystem layer's unit tests and the fault-injecting and
// bandwidth-limited wrappers run on it, and it passes the same contract suite as the SDK client.

import { createHash, randomUUID } from 'node:crypto';
import {
  type ByteRange,
  type CompletedPart,
  type ListOptions,
  type ListPage,
  type ObjectClient,
  ObjectError,
  type ObjectHead,
  type PendingUpload,
  type ObjectInfo,
  type OnPiece,
  S3_LIMITS,
  type WriteOptions,
} from './object-client.ts';

interface Stored {
  body: Buffer;
  etag: string;
  lastModified: Date;
  metadata: Record<string, string>;
  contentType?: string;
}

interface Upload {
  key: string;
  parts: Map<number, { body: Buffer; etag: string }>;
  options: WriteOptions;
  initiated: Date;
}

const DEFAULT_MAX_KEYS = 1000;

function md5(body: Buffer): string {
  return createHash('md5').update(body).digest('hex');
}

function headOf(key: string, o: Stored): ObjectHead {
  return {
    key,
    size: o.body.length,
    etag: o.etag,
    lastModified: o.lastModified,
    metadata: { ...o.metadata },
    contentType: o.contentType,
  };
}

function lowerKeys(meta: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta ?? {})) out[k.toLowerCase()] = v;
  return out;
}

export class MemoryObjectClient implements ObjectClient {
  readonly objects = new Map<string, Stored>();
  readonly uploads = new Map<string, Upload>();
  /** Counts of calls by operation, for tests that assert what a filesystem operation cost. */
  readonly calls = new Map<string, number>();

  private count(op: string): void {
    this.calls.set(op, (this.calls.get(op) ?? 0) + 1);
  }

  private store(key: string, body: Buffer, options: WriteOptions | undefined, etag = md5(body)): string {
    if (Buffer.byteLength(key) > S3_LIMITS.maxKeyBytes) {
      throw new ObjectError('other', `key longer than ${S3_LIMITS.maxKeyBytes} bytes`, key);
    }
    this.objects.set(key, {
      body,
      etag,
      lastModified: new Date(),
      metadata: lowerKeys(options?.metadata),
      contentType: options?.contentType,
    });
    return etag;
  }

  private must(key: string): Stored {
    const o = this.objects.get(key);
    if (!o) throw new ObjectError('not-found', `no such key ${key}`, key);
    return o;
  }

  private mustMatch(key: string, o: Stored, range: ByteRange | undefined): void {
    if (range?.ifMatch !== undefined && range.ifMatch !== o.etag)
      throw new ObjectError('changed', `${key} is no longer version ${range.ifMatch}`, key);
    range?.version?.check(key, { etag: o.etag || undefined, lastModified: o.lastModified.getTime(), size: o.body.length });
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    this.count('head');
    const o = this.objects.get(key);
    if (!o) return undefined;
    return headOf(key, o);
  }

  async get(key: string, range?: ByteRange): Promise<Buffer> {
    this.count('get');
    const o = this.must(key);
    this.mustMatch(key, o, range);
    if (range && range.start >= o.body.length && o.body.length > 0) {
      throw new ObjectError('invalid-range', `range starts past the end of ${key}`, key);
    }
    return Buffer.from(range ? o.body.subarray(range.start, Math.min(range.end, o.body.length)) : o.body);
  }

  async getPieces(key: string, range: ByteRange, onPiece: OnPiece): Promise<number> {
    const body = await this.get(key, range);
    // In two pieces a turn apart, as a network would, so callers' handling of partial bodies is
    // exercised.
    const half = body.length >> 1;
    if (half > 0) onPiece(body.subarray(0, half));
    await Promise.resolve();
    if (body.length > half) onPiece(body.subarray(half));
    return body.length;
  }

  async getWithHead(key: string, range: ByteRange): Promise<{ body: Buffer; head: ObjectHead }> {
    this.count('getWithHead');
    const o = this.must(key);
    this.mustMatch(key, o, range);
    const body = Buffer.from(
      o.body.subarray(Math.min(range.start, o.body.length), Math.min(range.end, o.body.length)),
    );
    return { body, head: headOf(key, o) };
  }

  async put(key: string, body: Buffer, options?: WriteOptions): Promise<{ etag: string }> {
    this.count('put');
    if (body.length > S3_LIMITS.maxSinglePut) throw new ObjectError('too-large', 'body over 5 GiB', key);
    return { etag: this.store(key, Buffer.from(body), options) };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    this.count('list');
    const max = options.maxKeys ?? DEFAULT_MAX_KEYS;
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
    // Every listed item (object key or common prefix) in key order, prefixes once each.
    const items: { name: string; isPrefix: boolean }[] = [];
    for (const key of keys) {
      const rest = key.slice(prefix.length);
      const cut = options.delimiter ? rest.indexOf(options.delimiter) : -1;
      if (cut < 0) {
        items.push({ name: key, isPrefix: false });
        continue;
      }
      const name = prefix + rest.slice(0, cut + options.delimiter!.length);
      if (items.at(-1)?.name !== name) items.push({ name, isPrefix: true });
    }
    // The continuation token is the last item returned, used as S3 uses StartAfter.
    const after = options.continuationToken;
    const rest = after === undefined ? items : items.filter((i) => i.name > after);
    const page = rest.slice(0, max);
    const objects: ObjectInfo[] = [];
    const prefixes: string[] = [];
    for (const item of page) {
      if (item.isPrefix) prefixes.push(item.name);
      else {
        const o = this.objects.get(item.name)!;
        objects.push({ key: item.name, size: o.body.length, etag: o.etag, lastModified: o.lastModified });
      }
    }
    return { objects, prefixes, nextToken: rest.length > max ? page.at(-1)!.name : undefined };
  }

  async delete(key: string): Promise<void> {
    this.count('delete');
    this.objects.delete(key);
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    this.count('deleteMany');
    for (const k of keys) this.objects.delete(k);
  }

  async copy(source: string, target: string, options?: WriteOptions): Promise<{ etag: string }> {
    this.count('copy');
    const o = this.must(source);
    if (o.body.length > S3_LIMITS.maxSinglePut) throw new ObjectError('too-large', 'copy over 5 GiB', source);
    const opts = options ?? { metadata: o.metadata, contentType: o.contentType };
    return { etag: this.store(target, Buffer.from(o.body), opts, o.etag) };
  }

  async createMultipart(key: string, options: WriteOptions = {}): Promise<string> {
    this.count('createMultipart');
    const id = randomUUID();
    this.uploads.set(id, { key, parts: new Map(), options, initiated: new Date() });
    return id;
  }

  private upload(key: string, uploadId: string): Upload {
    const u = this.uploads.get(uploadId);
    if (!u || u.key !== key) throw new ObjectError('not-found', `no such upload ${uploadId}`, key);
    return u;
  }

  async uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer): Promise<string> {
    this.count('uploadPart');
    const u = this.upload(key, uploadId);
    if (partNumber < 1 || partNumber > S3_LIMITS.maxParts) {
      throw new ObjectError('other', `part number ${partNumber} out of range`, key);
    }
    const etag = md5(body);
    u.parts.set(partNumber, { body: Buffer.from(body), etag });
    return etag;
  }

  async uploadPartCopy(
    key: string,
    uploadId: string,
    partNumber: number,
    source: string,
    range: ByteRange,
  ): Promise<string> {
    this.count('uploadPartCopy');
    const u = this.upload(key, uploadId);
    const o = this.must(source);
    if (range.ifMatch !== undefined && range.ifMatch !== o.etag)
      throw new ObjectError('changed', `${source} is no longer version ${range.ifMatch}`, source);
    const body = Buffer.from(o.body.subarray(range.start, range.end));
    const etag = md5(body);
    u.parts.set(partNumber, { body, etag });
    return etag;
  }

  async completeMultipart(
    key: string,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<{ etag: string }> {
    this.count('completeMultipart');
    const u = this.upload(key, uploadId);
    const bodies: Buffer[] = [];
    parts.forEach((p, i) => {
      const stored = u.parts.get(p.partNumber);
      if (!stored || stored.etag !== p.etag)
        throw new ObjectError('other', `part ${p.partNumber} missing`, key);
      if (i < parts.length - 1 && stored.body.length < S3_LIMITS.minPartSize) {
        throw new ObjectError('other', `part ${p.partNumber} smaller than 5 MiB`, key);
      }
      bodies.push(stored.body);
    });
    this.uploads.delete(uploadId);
    const body = Buffer.concat(bodies);
    const etag = `${md5(Buffer.from(parts.map((p) => p.etag).join('')))}-${parts.length}`;
    return { etag: this.store(key, body, u.options, etag) };
  }

  async abortMultipart(_key: string, uploadId: string): Promise<void> {
    this.count('abortMultipart');
    this.uploads.delete(uploadId);
  }

  async listUploads(prefix: string): Promise<PendingUpload[]> {
    this.count('listUploads');
    return [...this.uploads]
      .filter(([, u]) => u.key.startsWith(prefix))
      .map(([uploadId, u]) => ({ key: u.key, uploadId, initiated: u.initiated }));
  }

  async checkBucket(): Promise<void> {
    this.count('checkBucket');
  }
}
