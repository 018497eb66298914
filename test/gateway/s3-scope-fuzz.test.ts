// The scope fuzzer: random keys, listing parameters, copy sources and DeleteObjects batches built
// from dot segments, separators, their percent-encodings (once and twice), Unicode lookalikes and
// the scope's neighbours, sent with a read and a write credential for `run42/`. Whatever the
// gateway answers, the store must never be asked about anything outside `run42/`, by any reading
// (s3rver resolves dot segments, Swift takes names literally), no listing answer may name anything
// outside it, no read may return an object outside it, and every object outside it is left as it
// was. Seeded and bounded in time; the seed is in every failure message
// (ESTUARY_FUZZ_SEED=N replays it, ESTUARY_FUZZ_MS sets the budget per store).

import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { issue } from '../../gateway/s3/credentials.ts';
import { seeded } from '../../lib/seeded.ts';
import { runTeardowns } from '../helpers/cleanup.ts';
import { type Seen, startCountingProxy } from '../helpers/counting-proxy.ts';
import { type S3Server, startS3rver } from '../helpers/s3rver.ts';
import { startSwift, swiftAvailable, type SwiftServer } from '../helpers/swift.ts';
import { BUCKET, gatewayOn, ISSUER, signed } from './helpers/s3-scope.ts';

afterAll(runTeardowns);

const SEED = Number(process.env.ESTUARY_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const BUDGET_MS = Number(process.env.ESTUARY_FUZZ_MS ?? 3000);
const MIN_REQUESTS = 150;
const OTHER = 'other-data';
const SCOPE = 'run42/';

// Objects outside the scope, each with a body no read through the gateway may ever return.
const OUTSIDE = ['secret', 'run42', 'run420/x', 'run42-/y', 'run42%2Fz', 'run42.txt', 'a/run42/b'];
const INSIDE = ['run42/a', 'run42/sub/b', 'run42/..x', 'run42/%2e'];
const body = (k: string) => `SENTINEL:${k}`;

// Path atoms as they go on the wire (already percent-encoded where HTTP needs it).
const ATOMS = [
  '.', '..', '/', '//', '%2e', '%2E', '%2e%2e', '%2f', '%2F', '%252e', '%252e%252e', '%252f', '%25252e', '\\', '%5c', '%5C',
  '%E2%80%A4', '%E2%80%A5', '%EF%BC%8E', '%EF%BC%8F', '%EF%BC%BC', '%EF%BC%85', '%EF%BC%852e', 'run42', 'run420', 'run42-', 'run42/', 'secret', 'x', '%20', '+', '%',
  `${OTHER}`, 'a',
];

/** The store's readings of a wire name: decoded up to three times (before or after NFKC), `\` as `/`, normalised. */
function readings(wire: string): string[] {
  const out: string[] = [];
  let frontier = [wire];
  for (let i = 0; i < 4; i++) {
    const next: string[] = [];
    for (const s of frontier) {
      for (const v of [s, s.normalize('NFKC')]) {
        const slashed = v.replace(/\\/g, '/');
        out.push(slashed, posix.normalize(`/${slashed}`).slice(1));
        try {
          const d = decodeURIComponent(v);
          if (d !== v) next.push(d);
        } catch {
          // a store that cannot decode it reads it as it is
        }
      }
    }
    frontier = next;
  }
  return out;
}

/** Whether every reading of a key the store was asked about stays in the scope. */
function inside(wireKey: string): boolean {
  return readings(wireKey).every((r) => r.startsWith(SCOPE) && !r.split('/').some((seg) => seg === '..' || seg === '.'));
}

/** The problem with one request the store saw, or undefined. */
function storeRequestProblem(s: Seen): string | undefined {
  const [path, query = ''] = s.path.split('?');
  if (s.copySource !== undefined) {
    const src = s.copySource.replace(/^\//, '').split('?')[0]!;
    if (!src.startsWith(`${BUCKET}/`) || !inside(src.slice(BUCKET.length + 1))) return `copy source ${s.copySource}`;
  }
  if (path === `/${BUCKET}` || path === `/${BUCKET}/`) {
    const q = new URLSearchParams(query);
    if (q.has('delete')) return undefined; // its body is checked by the objects left intact
    const prefix = q.get('prefix') ?? '';
    if (!inside(prefix)) return `listing of prefix ${prefix}`;
    for (const p of ['start-after', 'marker', 'key-marker']) if (q.has(p) && readings(q.get(p)!).some((r) => r.split('/').includes('..'))) return `${p} ${q.get(p)}`;
    return undefined;
  }
  if (!path!.startsWith(`/${BUCKET}/`)) return `path ${s.path}`;
  return inside(path!.slice(BUCKET.length + 2)) ? undefined : `object ${s.path}`;
}

const pick = <T,>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

function randomName(rnd: () => number): string {
  const n = 1 + Math.floor(rnd() * 5);
  let s = rnd() < 0.7 ? pick(rnd, ['run42/', 'run42', 'run42%2F', 'run42%2f', '']) : '';
  for (let i = 0; i < n; i++) s += pick(rnd, ATOMS) + (rnd() < 0.4 ? '/' : '');
  return s;
}

/** A listing answer's names (Key, CommonPrefixes, next markers), decoded as its EncodingType says. */
function listedNames(xml: string): string[] {
  const enc = /<EncodingType>url<\/EncodingType>/.test(xml);
  const dec = (s: string) => {
    const t = s.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)));
    try {
      return enc ? decodeURIComponent(t.replace(/\+/g, ' ')) : t;
    } catch {
      return t;
    }
  };
  const keys = [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => dec(m[1]!));
  const cps = [...xml.matchAll(/<CommonPrefixes>\s*<Prefix>([^<]*)<\/Prefix>/g)].map((m) => dec(m[1]!));
  const markers = [...xml.matchAll(/<(NextMarker|NextKeyMarker)>([^<]*)<\/\1>/g)].map((m) => dec(m[2]!)).filter((m) => !m.startsWith('estl1.'));
  return [...keys, ...cps, ...markers];
}

const stores: [string, () => Promise<S3Server>, boolean][] = [
  ['s3rver', () => startS3rver({ buckets: [BUCKET, OTHER] }), true],
  ['Swift', () => startSwift({ buckets: [BUCKET, OTHER] }), (await swiftAvailable()).ok],
];

for (const [name, start, available] of stores) {
  describe.runIf(available)(`scope fuzzer (${name})`, async () => {
    const store = await start();
    const relay = await startCountingProxy(store.endpoint);
    const gw = await gatewayOn(relay.url, store);
    const direct = (method: string, path: string, b?: string) => signed(store.endpoint, store, method, path, { body: b });
    const enc = (k: string) => k.split('/').map(encodeURIComponent).join('/');
    for (const k of [...OUTSIDE, ...INSIDE]) expect((await direct('PUT', `/${BUCKET}/${enc(k)}`, body(k))).status, k).toBe(200);
    expect((await direct('PUT', `/${OTHER}/topsecret`, body('topsecret'))).status).toBe(200);
    const cred = (write: boolean) => {
      const c = issue(ISSUER, [{ bucket: BUCKET, prefix: SCOPE, write }], 3_600_000, Date.now());
      return { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken };
    };
    const read = cred(false);
    const write = cred(true);
    // Swift writes its log lines a little after it answers: the fuzzed requests are counted from
    // the point where the set-up writes above are all in the log, or they would count as fuzzed.
    const logStart = store.kind === 'swift' ? await logSettled(store as SwiftServer, OUTSIDE.length + INSIDE.length + 1) : 0;

    it(`never reaches outside the scope (seed ${SEED})`, async () => {
      const rnd = seeded(SEED + (name === 'Swift' ? 1 : 0));
      const from = relay.seen.length;
      const problems: string[] = [];
      const deadline = Date.now() + BUDGET_MS;
      let sent = 0;
      // At least MIN_REQUESTS however loaded the machine, at most 2000 however fast.
      for (; (Date.now() < deadline || sent < MIN_REQUESTS) && sent < 2000; sent++) {
        const key = randomName(rnd);
        const op = Math.floor(rnd() * 8);
        const c = rnd() < 0.5 ? read : write;
        const what = `seed ${SEED} #${sent}`;
        let r;
        if (op === 0 || op === 1) r = await signed(gw.url, c, op === 0 ? 'GET' : 'HEAD', `/${BUCKET}/${key}`);
        else if (op === 2) r = await signed(gw.url, c, 'PUT', `/${BUCKET}/${key}`, { body: 'fuzz' });
        else if (op === 3) r = await signed(gw.url, c, 'DELETE', `/${BUCKET}/${key}`);
        else if (op === 4) r = await signed(gw.url, c, 'PUT', `/${BUCKET}/run42/copy`, { headers: { 'x-amz-copy-source': `${BUCKET}/${randomName(rnd)}${rnd() < 0.3 ? '?versionId=null' : ''}` } });
        else if (op === 5) {
          const keys = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => decodeOr(randomName(rnd)));
          const xml = `<Delete>${keys.map((k) => `<Object><Key>${k.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</Key></Object>`).join('')}</Delete>`;
          r = await signed(gw.url, c, 'POST', `/${BUCKET}?delete`, { body: xml });
        } else {
          const params = [`list-type=${rnd() < 0.5 ? 2 : 1}`, `prefix=${randomName(rnd)}`];
          if (rnd() < 0.5) params.push('delimiter=/');
          if (rnd() < 0.5) params.push(`max-keys=${1 + Math.floor(rnd() * 3)}`);
          if (rnd() < 0.3) params.push(`${pick(rnd, ['start-after', 'marker'])}=${randomName(rnd)}`);
          if (rnd() < 0.3) params.push('encoding-type=url');
          if (rnd() < 0.15) params.push(pick(rnd, ['versions', 'uploads']));
          r = await signed(gw.url, c, 'GET', `/${BUCKET}?${params.join('&')}`);
          if (r.status === 200) for (const n of listedNames(r.body.toString())) if (!n.startsWith(SCOPE) && n !== '') problems.push(`${what}: listing named ${n}`);
        }
        if (r.body.toString().includes('SENTINEL:') && !INSIDE.some((k) => r.body.toString() === body(k))) problems.push(`${what}: read ${r.body.toString().slice(0, 60)}`);
      }
      for (const s of relay.seen.slice(from)) {
        const p = storeRequestProblem(s);
        if (p) problems.push(`seed ${SEED}: the store was asked ${s.method} ${p} RAW ${s.path}`);
      }
      // Swift's log is read before the checks below read the objects outside the scope directly.
      if (store.kind === 'swift') {
        const logged = await swiftLog(store as SwiftServer, logStart);
        expect(logged.seen, 'the object server logged the fuzzed requests').toBeGreaterThan(10);
        problems.push(...logged.problems);
      }
      for (const k of OUTSIDE) {
        const got = await direct('GET', `/${BUCKET}/${enc(k)}`);
        if (got.body.toString() !== body(k)) problems.push(`seed ${SEED}: ${k} changed (${got.status})`);
      }
      if ((await direct('GET', `/${OTHER}/topsecret`)).body.toString() !== body('topsecret')) problems.push(`seed ${SEED}: ${OTHER}/topsecret changed`);
      const all = (await direct('GET', `/${BUCKET}?list-type=2`)).body.toString();
      for (const k of [...all.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!)) {
        if (!k.startsWith(SCOPE) && !OUTSIDE.includes(k)) problems.push(`seed ${SEED}: ${k} appeared outside the scope`);
      }
      expect(problems.slice(0, 10), `seed ${SEED}, ${sent} requests`).toEqual([]);
      // Not everything is refused: the fuzzer also walks the paths that do reach the store.
      expect(relay.seen.length - from, `seed ${SEED}`).toBeGreaterThan(sent / 20);
      console.log(`scope fuzzer (${name}): seed ${SEED}, ${sent} requests, ${relay.seen.length - from} reached the store`);
    });
  });
}

function decodeOr(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The length of Swift's log once its object server has logged at least `puts` PUTs (10 s at most). */
async function logSettled(store: SwiftServer, puts: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const log = await readFile(store.logFile, 'utf8');
    const logged = log.match(/object-server: .*?"PUT \/[^/]+\/\d+\/AUTH_/g)?.length ?? 0;
    if (logged >= puts || Date.now() > deadline) return log.length;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Requests Swift's object server logged since `from`, and those for names outside the scope. */
async function swiftLog(store: SwiftServer, from: number): Promise<{ seen: number; problems: string[] }> {
  const log = (await readFile(store.logFile, 'utf8')).slice(from);
  const problems: string[] = [];
  let seen = 0;
  // object-server: "METHOD /device/partition/AUTH_account/container/object" — the name it acts on.
  for (const m of log.matchAll(/object-server: .*?"(GET|HEAD|PUT|DELETE|POST) \/[^/]+\/\d+\/AUTH_[^/]+\/([^/ ]+)\/(\S*)"/g)) {
    seen++;
    const [container, object] = [m[2]!, m[3]!];
    if (container !== BUCKET || !inside(object)) problems.push(`seed ${SEED}: Swift's object server logged ${m[1]} ${container}/${object}`);
  }
  return { seen, problems };
}
