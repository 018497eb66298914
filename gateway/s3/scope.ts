// Which object names the gateway lets through, whatever the credential. A scope check is a string
// test (`run42/x` starts with `run42/`), and it only means something if the store addresses the
// same string. Stores differ: s3rver joins key segments as file paths (`run42/../secret` is
// `secret`, `a//b` is `a/b`, and `..` above the bucket reaches other buckets), a proxy in front
// of a store may do the same, a store may decode a percent-escape a second time, and a Windows
// host treats `\` as a separator. Swift and AWS S3 take names literally. So a name is refused when
// any of these readings has a `.` or `..` segment:
//
//   - the name as decoded once from the wire (so `%2e%2e`, `%2E%2E` and `%2f` are already seen),
//   - the name decoded again, up to MAX_DECODES times (`%252e%252e` as a store decoding twice sees it),
//   - each of those after Unicode compatibility normalisation (NFKC: U+2024 ONE DOT LEADER, U+FF0E
//     FULLWIDTH FULL STOP and U+FF0F FULLWIDTH SOLIDUS read as `.`, `.` and `/`),
//
// with both `/` and `\` as separators. Such names are refused for every credential, also one for
// a whole bucket: the bucket is a scope too (`..` above it reaches the store's other buckets with
// the site's keys), and the cache key must name the object the store serves. What passes is sent
// to the store in one canonical encoding (upstreamKey), so the store sees exactly what was
// checked. Pure.

import { uriEncode } from '../../lib/sigv4.ts';

/** Decoding more often than this is no store's behaviour; it bounds the work on hostile input. */
const MAX_DECODES = 3;

function decodeOnce(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    // A stray `%` stops a strict decoder; a lenient one decodes the valid escapes around it.
    return s.replace(/%[0-9a-fA-F]{2}/g, (e) => {
      try {
        return decodeURIComponent(e);
      } catch {
        return e;
      }
    });
  }
}

/**
 * Every reading of `name` some store or proxy on the way might act on: decoded up to MAX_DECODES
 * times, each step before or after NFKC (which also turns a fullwidth `％` into a `%`).
 */
function readings(name: string): string[] {
  const out = new Set<string>();
  let frontier = [name];
  for (let i = 0; i <= MAX_DECODES && frontier.length > 0; i++) {
    const next: string[] = [];
    for (const s of frontier) {
      for (const v of [s, s.normalize('NFKC')]) {
        if (out.has(v)) continue;
        out.add(v);
        const d = decodeOnce(v);
        if (d !== v) next.push(d);
      }
    }
    frontier = next;
  }
  return [...out];
}

/** True when some reading of a (decoded) key, prefix or marker has a `.` or `..` segment. */
export function hasDotSegment(name: string): boolean {
  return readings(name).some((r) => r.split(/[/\\]/).some((seg) => seg === '.' || seg === '..'));
}

/**
 * Why a name may not be sent to the store, or undefined when it may. Besides dot segments, a name
 * with a NUL is refused: file-backed stores cut the path there.
 */
export function nameProblem(name: string): string | undefined {
  if (hasDotSegment(name)) return 'names with a "." or ".." segment (also percent-encoded, or as a store might decode or normalise them) are refused';
  if (name.includes('\0')) return 'names with a NUL character are refused';
  return undefined;
}

/**
 * Why a credential's prefix cannot be a scope, or undefined. Besides the names refused above, a
 * prefix with an empty segment (`a//`) is refused: a store that collapses `//` would serve
 * `a//b` from `a/b`, outside it.
 */
export function prefixProblem(prefix: string): string | undefined {
  return nameProblem(prefix) ?? (prefix.includes('//') ? 'a prefix with an empty segment ("//") is refused' : undefined);
}

/** The key as sent to the store: each segment percent-encoded the way SigV4 canonicalises it. */
export function upstreamKey(key: string): string {
  return key.split('/').map(uriEncode).join('/');
}

/** Query parameters of listings that name keys: each is checked like a key. */
const NAME_PARAMS = ['prefix', 'marker', 'start-after', 'key-marker', 'upload-id-marker', 'version-id-marker'];

/**
 * The names a continuation token might carry: itself, and its base64 text (s3rver, Swift). The
 * gateway's own listing tokens are checked by their MAC instead: their base64 is no name.
 */
function tokenNames(token: string): string[] {
  if (/^estl1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/.test(token)) return [];
  const text = Buffer.from(token, 'base64').toString('utf8');
  return [token, text];
}

/**
 * Why a request names something that may not reach the store (its key, a listing parameter, its
 * copy source), or undefined. `key` is the decoded key ('' for bucket-level requests).
 */
export function requestNameProblem(key: string, params: ReadonlyMap<string, string>, copySource?: string): string | undefined {
  const named: [string, string][] = [['key', key]];
  for (const p of NAME_PARAMS) if (params.has(p)) named.push([p, params.get(p)!]);
  const token = params.get('continuation-token');
  if (token !== undefined) for (const t of tokenNames(token)) named.push(['continuation-token', t]);
  if (copySource !== undefined) named.push(['x-amz-copy-source', copySource]);
  for (const [what, name] of named) {
    const why = nameProblem(name);
    if (why) return `${what}: ${why}`;
  }
  return undefined;
}
