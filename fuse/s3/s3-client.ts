// The mount's ObjectClient: the control calls (control-path.ts) and the bytes (data-path.ts), both
// signed with lib/sigv4.ts on HTTP/1.1 connections of the mount's own, at the address
// store-address.ts resolves and with the credentials credentials.ts finds. No AWS SDK client: it
// alone held ~35 MB of a started mount (docs/BENCHMARKING.md, "What the mount holds without the
// AWS SDK"); the SDK's credential provider chain is loaded only when no keys are given.
// Path-style addressing, as S3-compatible servers need.

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ControlPath } from './control-path.ts';
import { credentialSource, nodeProviderChain } from './credentials.ts';
import { DataPath } from './data-path.ts';
import type { Credentials } from './http-exchange.ts';
import {
  type ByteRange,
  type CompletedPart,
  type ListOptions,
  type ListPage,
  type ObjectClient,
  isObjectError,
  ObjectError,
  type ObjectHead,
  type OnPiece,
  type PendingUpload,
  type WriteOptions,
} from './object-client.ts';
import { SlabPool } from './slab-pool.ts';
import { type Env, resolveStoreAddress, type StoreAddress } from './store-address.ts';

export interface S3ClientOptions {
  readonly bucket: string;
  /** S3-compatible endpoint; else the environment's or shared config's, else AWS's own. */
  readonly endpoint?: string;
  /** Else AWS_REGION, AWS_DEFAULT_REGION, the profile's, us-east-1. */
  readonly region?: string;
  /** Attempts per request, with backoff (503 SlowDown, resets, 5xx): see s3-errors.ts. */
  readonly maxAttempts: number;
  /**
   * An attempt that sends or receives no byte for this long fails with a timeout, which counts
   * as a reset (retried, then `unavailable`): a store that accepts a request and never answers
   * must not hold the caller, whom the kernel cannot interrupt while the daemon has its request.
   */
  readonly idleTimeoutMs: number;
  /** Sockets per host for the data path: parallel part uploads and ranged reads each take one. */
  readonly maxSockets: number;
  /** Else AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, else the AWS SDK's provider chain. */
  readonly credentials?: Credentials;
  /** The environment the address and static keys are read from (the credential chain reads process.env). */
  readonly env?: Env;
}

/** Control calls are few at a time: a listing, a HEAD per lookup, a copy per rename. */
const CONTROL_SOCKETS = 16;

/** The shared config file's text, as the SDK finds it; empty when there is none. */
export function readSharedConfig(env: Env): string {
  const path = env.AWS_CONFIG_FILE || join(env.HOME || homedir(), '.aws', 'config');
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export class S3ObjectClient implements ObjectClient {
  /** Where requests go and which region they are signed for. */
  readonly address: StoreAddress;
  private readonly control: ControlPath;
  private readonly dataPath: DataPath;
  private readonly slabs = new SlabPool();

  /** Throws StoreAddressError when the endpoint or region configured cannot be used. */
  constructor(options: S3ClientOptions) {
    const env = options.env ?? process.env;
    this.address = resolveStoreAddress({
      bucket: options.bucket,
      endpoint: options.endpoint,
      region: options.region,
      env,
      sharedConfig: readSharedConfig(env),
    });
    const exchange = {
      bucketUrl: this.address.bucketUrl,
      region: this.address.region,
      credentials: credentialSource(options.credentials, env, () => nodeProviderChain(options.idleTimeoutMs, env)),
      idleTimeoutMs: options.idleTimeoutMs,
    };
    this.control = new ControlPath({
      ...exchange,
      bucket: options.bucket,
      maxAttempts: options.maxAttempts,
      maxSockets: Math.min(CONTROL_SOCKETS, options.maxSockets),
    });
    this.dataPath = new DataPath({
      ...exchange,
      maxAttempts: options.maxAttempts,
      maxSockets: options.maxSockets,
      slabs: this.slabs,
    });
  }

  head(key: string): Promise<ObjectHead | undefined> {
    return this.control.head(key);
  }

  async get(key: string, range?: ByteRange): Promise<Buffer> {
    return (await this.dataPath.getBuffer(key, range)).body;
  }

  getPieces(key: string, range: ByteRange, onPiece: OnPiece): Promise<number> {
    return this.dataPath.getPieces(key, range, onPiece);
  }

  releasePiece(piece: Buffer): void {
    this.slabs.release(piece);
  }

  async getWithHead(key: string, range: ByteRange): Promise<{ body: Buffer; head: ObjectHead }> {
    try {
      const got = await this.dataPath.getBuffer(key, range);
      if (got.size !== undefined) return { body: got.body, head: this.dataPath.headOf(key, { reply: got.reply, size: got.size }) };
      // A 200 as long as the range (the range alone, or an object that size): a HEAD tells which.
      const head = await this.head(key);
      const said = this.dataPath.headOf(key, { reply: got.reply, size: got.body.length });
      const differ = <T>(x: T, y: T, none: T) => x !== none && y !== none && x !== y;
      if (!head || differ(head.etag, said.etag, '') || differ(head.lastModified.getTime(), said.lastModified.getTime(), 0))
        throw new ObjectError('changed', `${key} was replaced while it was opened`, key);
      return { body: got.body, head: { ...said, size: head.size } };
    } catch (err) {
      if (!isObjectError(err, 'invalid-range')) throw err;
      // A range of an empty object is unsatisfiable: ask for the facts alone.
      const head = await this.head(key);
      if (!head) throw new ObjectError('not-found', `no such key ${key}`, key);
      return { body: Buffer.alloc(0), head };
    }
  }

  put(key: string, body: Buffer, options: WriteOptions = {}): Promise<{ etag: string }> {
    return this.dataPath.put(key, body, options);
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.control.list(prefix, options);
  }

  listUploads(prefix: string): Promise<PendingUpload[]> {
    return this.control.listUploads(prefix);
  }

  storeNow(): number | undefined {
    return this.control.storeNow();
  }

  delete(key: string): Promise<void> {
    return this.control.delete(key);
  }

  deleteMany(keys: readonly string[]): Promise<void> {
    return this.control.deleteMany(keys);
  }

  copy(source: string, target: string, options?: WriteOptions): Promise<{ etag: string }> {
    return this.control.copy(source, target, options);
  }

  createMultipart(key: string, options?: WriteOptions): Promise<string> {
    return this.control.createMultipart(key, options);
  }

  uploadPart(key: string, uploadId: string, partNumber: number, body: Buffer): Promise<string> {
    return this.dataPath.uploadPart(key, uploadId, partNumber, body);
  }

  uploadPartCopy(key: string, uploadId: string, partNumber: number, source: string, range: ByteRange): Promise<string> {
    return this.control.uploadPartCopy(key, uploadId, partNumber, source, range);
  }

  completeMultipart(key: string, uploadId: string, parts: readonly CompletedPart[]): Promise<{ etag: string }> {
    return this.control.completeMultipart(key, uploadId, parts);
  }

  abortMultipart(key: string, uploadId: string): Promise<void> {
    return this.control.abortMultipart(key, uploadId);
  }

  checkBucket(prefix?: string): Promise<void> {
    return this.control.checkBucket(prefix);
  }

  destroy(): void {
    void this.control.close();
    void this.dataPath.close();
  }
}
