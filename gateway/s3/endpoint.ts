// The gateway as an S3 endpoint for the buckets of --s3 NAME=URL. Each request is checked before
// anything reaches the store: a SigV4 signature made with a credential this gateway issued
// (credentials.ts), within the clock skew, for an operation the credential's scopes allow. Then
// the request is re-signed with the store's real keys and handed to the proxy handler: plain
// object reads (GET/HEAD without sub-resources) go through the cache (keyed by bucket and key,
// revalidated by ETag after --s3-revalidate), everything else passes through, and writes invalidate
// what the cache holds for their key once the store has acknowledged them.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../lib/log.ts';
import type { ProxyHandler } from '../proxy/handler.ts';
import type { Target } from '../proxy/target.ts';
import { classifyError, type Upstreams } from '../upstream.ts';
import { allowed, checkToken, type Claims } from './credentials.ts';
import { deleteBody, deniedResult, MAX_DELETE_KEYS, mergeDenied, parseDeleteBatch } from './delete-objects.ts';
import { type S3ErrorCode, sendS3Error, sendXml } from './errors.ts';
import { filterListing } from './listing.ts';
import { runScopedListing } from './scoped-listing.ts';
import { aclGrant, uncachedRead } from './object-query.ts';
import { bucketOf, nextToken, parseCopySource, queryParams, routeS3, type S3Route, xmlObjects } from './route.ts';
import { nameProblem, requestNameProblem, upstreamKey } from './scope.ts';
import { uriEncode } from '../../lib/sigv4.ts';
import { parseAuthorization, sign, signingKey, UNSIGNED_PAYLOAD, verify } from '../../lib/sigv4.ts';
import type { ChunkSigning } from './aws-chunked.ts';
import { chunkedOptions, chunkedUpload } from './chunked-upload.ts';
import { expectsContinue, expectUpload } from './expect-upload.ts';

export interface UpstreamBucket {
  /** scheme://host:port of the store. */
  readonly origin: string;
  /** The bucket's name at the store (may differ from the name served). */
  readonly bucket: string;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string };
}

export interface S3EndpointOptions {
  readonly buckets: ReadonlyMap<string, UpstreamBucket>;
  readonly issuerKey: string;
  readonly maxSkewMs: number;
  readonly revalidateS: number;
  readonly handler: ProxyHandler;
  readonly upstreams: Upstreams;
  readonly log: Logger;
}

/** Answers a refused request with an S3 error, having logged it. */
type Deny = (code: S3ErrorCode, message: string) => void;

/** One prefetch request lists at most this many objects of a prefix. */
const MAX_PREFETCH_LISTED = 100_000;
/** DeleteObjects bodies name at most 1000 keys: 1 MiB is far more than such a body needs. */
const MAX_DELETE_BODY = 1024 * 1024;
/** Methods undici sends a Content-Length: 0 for; for any other it drops a zero length. */
const BODY_METHODS = new Set(['PUT', 'POST', 'PATCH']);
/** Request headers never sent to the store: the client's own signature and hop-by-hop fields. */
const CLIENT_AUTH = ['authorization', 'x-amz-security-token', 'x-amz-date', 'x-amz-content-sha256', 'host'];

export class S3Endpoint {
  readonly #o: S3EndpointOptions;
  readonly #names: ReadonlySet<string>;

  constructor(o: S3EndpointOptions) {
    this.#o = o;
    this.#names = new Set(o.buckets.keys());
  }

  /** Whether this request addresses one of the served buckets. */
  matches(req: IncomingMessage): boolean {
    return this.matchesTarget(req.url ?? '', req.headers.host);
  }

  /** Whether a request for `url` with this Host is for one of the endpoint's buckets. */
  matchesTarget(url: string, host: string | undefined): boolean {
    if (url[0] !== '/') return false;
    const q = url.indexOf('?');
    return bucketOf(q === -1 ? url : url.slice(0, q), host, this.#names) !== undefined;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.#handle(req, res).catch((err) => {
      this.#o.log.error({ err, url: req.url }, 'internal error in the S3 endpoint');
      sendS3Error(res, 'ServiceUnavailable', 'internal error in the gateway; see its log', req.url ?? '');
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const qi = url.indexOf('?');
    const path = qi === -1 ? url : url.slice(0, qi);
    const query = qi === -1 ? '' : url.slice(qi + 1);
    const addressed = bucketOf(path, req.headers.host, this.#names)!;
    const route = routeS3(req.method ?? '', addressed.bucket, addressed.rest, query);
    const resource = `/${addressed.bucket}/${addressed.rest}`;
    const deny: Deny = (code, message) => {
      this.#o.log.info({ client: req.socket?.remoteAddress, method: req.method, resource, query, code }, `S3 request refused: ${message}`);
      req.resume();
      sendS3Error(res, code, message, resource);
    };
    if ('error' in route) return deny(route.code ?? 'InvalidRequest', route.error);
    const authenticated = this.#authenticate(req, path, query, deny);
    if (!authenticated) return;
    const { claims, signing } = authenticated;
    if (route.op === 'refused') return deny('NotImplemented', `${req.method} on this resource is not served by the gateway`);
    const copy = req.headers['x-amz-copy-source'];
    const src = typeof copy === 'string' ? parseCopySource(copy) : undefined;
    if (typeof copy === 'string' && !src) return deny('InvalidRequest', 'x-amz-copy-source must be BUCKET/KEY, percent-encoded, with an optional ?versionId=');
    const params = queryParams(route.query);
    const badName = requestNameProblem(route.key, params, src?.key);
    if (badName) return deny('AccessDenied', badName);
    const readable = claims.scopes.filter((sc) => sc.bucket === route.bucket).map((sc) => sc.prefix);
    // Listings are clamped to the credential's scopes and answered by the gateway (for a whole
    // bucket too: encoding-type and the tokens then mean the same on every store).
    if (route.op === 'list' && readable.length > 0) return this.#scopedList(req, res, route, params, readable, deny);
    // A DeleteObjects batch is checked key by key once its body is read.
    const inScope =
      route.op === 'delete-objects'
        ? claims.scopes.some((sc) => sc.bucket === route.bucket && sc.write)
        : allowed(claims.scopes, { bucket: route.bucket, key: route.scopeKey, write: route.write });
    // The scope's own prefix as a key (s3fs looks up `run42` when it lists the bucket's root for a
    // `run42/` credential): answered as S3 answers for a key that is not there, so a mount shows a
    // directory, not an unreadable file. The store is not asked; nothing outside the scope is told.
    if (!inScope && route.op === 'get' && claims.scopes.some((sc) => sc.bucket === route.bucket && sc.prefix === `${route.key}/`)) {
      return deny('NoSuchKey', 'the specified key does not exist');
    }
    if (!inScope) {
      return deny('AccessDenied', `this credential does not allow ${route.write ? 'writing' : 'reading'} ${route.bucket}/${route.scopeKey}`);
    }
    const grant = route.write ? aclGrant(req.headers) : undefined;
    if (grant) return deny('AccessDenied', `${grant}: a gateway credential cannot change who may read an object; it keeps the bucket's policy`);
    const payload = String(req.headers['x-amz-content-sha256'] ?? UNSIGNED_PAYLOAD);
    // aws-chunked bodies are decoded here and go to the store plain (chunked-upload.ts).
    const chunked = payload.startsWith('STREAMING-');
    if (chunked && !(route.op === 'write' && req.method === 'PUT')) {
      return deny('InvalidRequest', 'an aws-chunked body is accepted only by PutObject and UploadPart');
    }
    const upstream = this.#o.buckets.get(route.bucket)!;
    const extra: Record<string, string> = {};
    if (src) {
      if (!this.#o.buckets.has(src.bucket)) return deny('InvalidRequest', 'x-amz-copy-source must name a bucket this gateway serves');
      if (!allowed(claims.scopes, { bucket: src.bucket, key: src.key, write: false })) {
        return deny('AccessDenied', `this credential does not allow reading ${src.bucket}/${src.key}`);
      }
      if (this.#o.buckets.get(src.bucket)!.origin !== upstream.origin) {
        return deny('NotImplemented', 'copying between buckets on different stores is not supported');
      }
      // Sent as checked: the canonical encoding of the decoded key, never the client's bytes.
      extra['x-amz-copy-source'] = `/${this.#o.buckets.get(src.bucket)!.bucket}/${upstreamKey(src.key)}${src.suffix}`;
    }
    const target = this.#target(route, upstream, chunked ? UNSIGNED_PAYLOAD : payload, extra);
    const invalidate = () => this.#o.handler.invalidate([target.key]);
    if (expectsContinue(req)) {
      if (route.op === 'write' && !chunked && (req.method === 'PUT' || req.method === 'POST')) {
        return expectUpload(req, res, target, { log: this.#o.log, invalidate }, deny);
      }
      res.writeContinue();
    }
    if (chunked) {
      const deps = { upstreams: this.#o.upstreams, log: this.#o.log, invalidate };
      return chunkedUpload(req, res, target, chunkedOptions(req, signing), deps, deny);
    }
    if (route.op === 'delete-objects') return this.#deleteObjects(req, res, route, claims, deny);
    if (route.op === 'get') return this.#o.handler.serveS3(req, res, target, uncachedRead(req.headers) ? 'read' : 'cached');
    return this.#o.handler.serveS3(req, res, target, route.write ? 'write' : 'read');
  }

  /**
   * Targets for `s3://NAME/KEY`, or for every object under `s3://NAME/PREFIX/` (listed at the
   * store), for the admin API's prefetch. Undefined when NAME is not served here.
   */
  async prefetchTargets(url: string): Promise<Target[] | undefined> {
    const m = /^s3:\/\/([^/]+)\/(.*)$/.exec(url);
    const up = m ? this.#o.buckets.get(m[1]!) : undefined;
    if (!m || !up) return undefined;
    const bucket = m[1]!;
    const target = (key: string) =>
      this.#target(
        { bucket, key, rawKey: key.split('/').map(uriEncode).join('/'), op: 'get', scopeKey: key, write: false, query: '' },
        up,
        UNSIGNED_PAYLOAD,
        {},
      );
    if (m[2] !== '' && !m[2]!.endsWith('/')) return [target(m[2]!)];
    const keys = (await this.#list(bucket, m[2]!, url)).map((o) => o.key);
    return keys.map(target);
  }

  /**
   * Bytes at the store under `s3://NAME/KEY`: the object KEY, or every object under KEY/ (a
   * dataset named without its slash), or under PREFIX/. Undefined when NAME is not served here.
   * For the coordinator, which asks what moving an input would cost.
   */
  async sizeOf(url: string): Promise<{ bytes: number; objects: number } | undefined> {
    const m = /^s3:\/\/([^/]+)\/(.*)$/.exec(url);
    if (!m || !this.#o.buckets.has(m[1]!)) return undefined;
    const key = m[2]!;
    const found = (await this.#list(m[1]!, key, url)).filter(
      (o) => key === '' || key.endsWith('/') || o.key === key || o.key.startsWith(`${key}/`),
    );
    return { bytes: found.reduce((s, o) => s + o.size, 0), objects: found.length };
  }

  /** Every object under `prefix` at the store (at most MAX_PREFETCH_LISTED), with its size. */
  async #list(bucket: string, prefix: string, url: string): Promise<{ key: string; size: number }[]> {
    const up = this.#o.buckets.get(bucket)!;
    const out: { key: string; size: number }[] = [];
    let token: string | undefined;
    do {
      const q = `list-type=2&prefix=${uriEncode(prefix)}${token ? `&continuation-token=${uriEncode(token)}` : ''}`;
      const list = { ...this.#target({ bucket, key: '', rawKey: '', op: 'list', scopeKey: prefix, write: false, query: q }, up, UNSIGNED_PAYLOAD, {}) };
      const res = await this.#o.upstreams.request(list.servers, { method: 'GET', path: list.path, headers: list.sign!('GET', {}), label: list.label });
      const xml = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`listing ${url} at the store answered ${res.statusCode}`);
      out.push(...xmlObjects(xml).filter((o) => !o.key.endsWith('/')));
      token = nextToken(xml);
    } while (token && out.length < MAX_PREFETCH_LISTED);
    return out;
  }

  /** Checks the signature and the credential; on failure answers and returns undefined. */
  #authenticate(
    req: IncomingMessage,
    path: string,
    query: string,
    deny: Deny,
  ): { claims: Claims; signing: ChunkSigning } | undefined {
    if (/(^|&)X-Amz-(Algorithm|Signature)=/i.test(query)) {
      deny('AccessDenied', 'query-string (presigned) authentication is not accepted by this gateway');
      return undefined;
    }
    const auth = parseAuthorization(req.headers.authorization);
    if (!auth) {
      deny('AccessDenied', 'requests must be signed (AWS4-HMAC-SHA256) with a credential this gateway issued');
      return undefined;
    }
    const token = req.headers['x-amz-security-token'];
    if (typeof token !== 'string') {
      deny('InvalidAccessKeyId', 'the access key is not one this gateway issued (no session token)');
      return undefined;
    }
    const now = Date.now();
    const checked = checkToken(this.#o.issuerKey, token, auth.accessKeyId, now);
    if (!checked.ok) {
      if (checked.why === 'expired') deny('ExpiredToken', 'the provided token has expired; issue a new credential');
      else if (checked.why === 'wrong-key') deny('InvalidAccessKeyId', 'the access key does not belong to this session token');
      else deny('InvalidToken', 'the session token is malformed or was not issued by this gateway');
      return undefined;
    }
    const v = verify({ method: req.method ?? '', path, query, headers: req.headers }, auth, checked.secret, now, this.#o.maxSkewMs);
    if (!v.ok) {
      if (v.why === 'skewed') deny('RequestTimeTooSkewed', 'the request time is too far from the gateway clock');
      else if (v.why === 'unsigned-header') deny('AccessDenied', 'every x-amz-* header must be signed');
      else deny('SignatureDoesNotMatch', 'the request signature does not match (wrong secret, or the request was changed)');
      return undefined;
    }
    const signing: ChunkSigning = {
      key: signingKey(checked.secret, auth.date, auth.region, auth.service),
      amzDate: String(req.headers['x-amz-date']),
      scope: `${auth.date}/${auth.region}/${auth.service}/aws4_request`,
      seed: auth.signature,
    };
    return { claims: checked.claims, signing };
  }

  #target(route: S3Route, up: UpstreamBucket, payload: string, extra: Record<string, string>): Target {
    // The key the scope check saw, canonically encoded: what the store addresses is what was checked.
    const path = `/${up.bucket}${route.key ? `/${upstreamKey(route.key)}` : ''}`;
    const host = new URL(up.origin).host;
    const cacheKey = `s3://${route.bucket}/${route.key}`;
    return {
      key: cacheKey,
      url: cacheKey,
      servers: [up.origin],
      path: route.query ? `${path}?${route.query}` : path,
      prefix: `s3/${route.bucket}/${route.key.split('/')[0] ?? ''}`,
      label: `s3:${route.bucket}`,
      lifetimeS: this.#o.revalidateS,
      sign: (method, headers) => {
        const h: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(headers)) if (!CLIENT_AUTH.includes(k)) h[k] = v;
        Object.assign(h, extra);
        if (route.op === 'get') {
          // What an object read stores answers every later reader: asked with the object's
          // checksum (harmless to readers that ignore it), so SDKs that verify downloads find it
          // whoever read first, and without Accept-Encoding, whose bytes are the same for all.
          h['x-amz-checksum-mode'] = 'ENABLED';
          delete h['accept-encoding'];
        }
        // undici leaves a zero Content-Length off a request whose method has no body (DELETE,
        // GET, HEAD); signed but not sent, the store would answer SignatureDoesNotMatch.
        if (!BODY_METHODS.has(method) && String(h['content-length']) === '0') delete h['content-length'];
        const hash = method === 'GET' || method === 'HEAD' ? UNSIGNED_PAYLOAD : payload;
        return sign({ method, path, query: route.query, headers: h, host }, up.credentials, up.region, hash, Date.now());
      },
    };
  }

  async #deleteObjects(req: IncomingMessage, res: ServerResponse, route: S3Route, claims: Claims, deny: Deny): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req as AsyncIterable<Buffer>) {
      size += c.length;
      if (size > MAX_DELETE_BODY) return deny('EntityTooLarge', 'a DeleteObjects body over 1 MiB is refused');
      chunks.push(c);
    }
    const batch = parseDeleteBatch(Buffer.concat(chunks).toString('utf8'));
    if (!batch) return deny('MalformedXML', `the DeleteObjects body must be <Delete> with 1 to ${MAX_DELETE_KEYS} <Object><Key>…</Key></Object>, without CDATA or comments`);
    const may = (k: string) => nameProblem(k) === undefined && allowed(claims.scopes, { bucket: route.bucket, key: k, write: true });
    const sent = batch.entries.filter((e) => may(e.key));
    const denied = batch.entries.filter((e) => !may(e.key));
    if (sent.length === 0) return sendXml(res, 200, deniedResult(denied));
    const { body, md5, sha256 } = deleteBody(batch.quiet, sent);
    const target = this.#target(route, this.#o.buckets.get(route.bucket)!, sha256, { 'content-md5': md5 });
    // The client's checksums are of its body, not of the one rebuilt for the store.
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => k !== 'content-md5' && !k.startsWith('x-amz-checksum-') && k !== 'x-amz-sdk-checksum-algorithm'),
    );
    const answer = await this.#exchange(req, target, 'POST', body, headers);
    if (!answer) return deny('ServiceUnavailable', 'the store is unreachable');
    if (answer.status < 400) await this.#o.handler.invalidate(sent.map((e) => `s3://${route.bucket}/${e.key}`));
    answer.send(res, answer.status === 200 ? Buffer.from(mergeDenied(answer.body.toString('utf8'), denied)) : answer.body);
  }

  /**
   * A listing by a credential for part of the bucket: ListObjects (V1, V2) clamped to its scopes
   * (scoped-listing.ts); ListObjectVersions and ListMultipartUploads only for a prefix inside a
   * scope, filtered once more; HeadBucket and GetBucketLocation passed.
   */
  async #scopedList(req: IncomingMessage, res: ServerResponse, route: S3Route, params: ReadonlyMap<string, string>, scopes: string[], deny: Deny): Promise<void> {
    const upstream = this.#o.buckets.get(route.bucket)!;
    // HeadBucket (a HEAD without a listing's parameters) and GetBucketLocation name no keys.
    const passed = (req.method === 'HEAD' && params.size === 0) || params.has('location');
    if (passed) return this.#o.handler.serveS3(req, res, this.#target(route, upstream, UNSIGNED_PAYLOAD, {}), 'read');
    if (params.has('versions') || params.has('uploads')) {
      const prefix = params.get('prefix') ?? '';
      if (!scopes.some((sc) => prefix.startsWith(sc))) {
        return deny('AccessDenied', `listing versions or uploads needs a prefix within this credential's scope (${scopes.join(', ')})`);
      }
      const answer = await this.#exchange(req, this.#target(route, upstream, UNSIGNED_PAYLOAD, {}), 'GET');
      if (!answer) return deny('ServiceUnavailable', 'the store is unreachable');
      const kept = answer.status === 200 ? filterListing(answer.body.toString('utf8'), scopes) : undefined;
      return answer.send(res, kept === undefined ? answer.body : Buffer.from(kept));
    }
    const fetchPage = async (query: string) => {
      const t = this.#target({ ...route, query }, upstream, UNSIGNED_PAYLOAD, {});
      const up = await this.#o.upstreams.request(t.servers, { method: 'GET', path: t.path, headers: t.sign!('GET', {}), label: t.label });
      return { status: up.statusCode, body: Buffer.from(await up.body.arrayBuffer()) };
    };
    let result;
    try {
      result = await runScopedListing(route.bucket, params, scopes, this.#o.issuerKey, fetchPage);
    } catch (err) {
      this.#o.log.warn({ bucket: route.bucket, err: classifyError(err).message }, 'S3 store unreachable');
      return deny('ServiceUnavailable', 'the store is unreachable');
    }
    if (result.kind === 'invalid') return deny('InvalidArgument', result.message);
    if (result.kind === 'answer') return sendXml(res, 200, result.xml);
    res.writeHead(result.status, { 'content-type': 'application/xml', 'content-length': result.body.length });
    res.end(req.method === 'HEAD' ? undefined : result.body);
  }

  /**
   * One signed request to the store whose answer is read whole (listings, DeleteObjects: small
   * XML), and a way to send it on with a corrected length. Undefined when the store is unreachable.
   */
  async #exchange(
    req: IncomingMessage,
    target: Target,
    method: 'GET' | 'POST',
    body?: Buffer,
    sent: IncomingMessage['headers'] = req.headers,
  ): Promise<{ status: number; body: Buffer; send: (res: ServerResponse, b: Buffer) => void } | undefined> {
    const base: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(sent)) if (v !== undefined && k !== 'content-length') base[k] = v;
    if (body) base['content-length'] = String(body.length);
    let up;
    try {
      up = await this.#o.upstreams.request(target.servers, {
        method,
        path: target.path,
        headers: target.sign!(method, base),
        body,
        label: target.label,
      });
    } catch (err) {
      this.#o.log.warn({ url: target.url, err: classifyError(err).message }, 'S3 store unreachable');
      return undefined;
    }
    const answer = Buffer.from(await up.body.arrayBuffer());
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(up.headers)) {
      if (v !== undefined && k !== 'connection' && k !== 'transfer-encoding' && k !== 'keep-alive') headers[k] = v;
    }
    return {
      status: up.statusCode,
      body: answer,
      send: (res, b) => {
        res.writeHead(up.statusCode, { ...headers, 'content-length': String(b.length) });
        res.end(req.method === 'HEAD' ? undefined : b);
      },
    };
  }
}
