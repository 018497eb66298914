// Whether an input URL lies inside a storage location. Inputs come from job comments that any
// batch user writes, and the coordinator sizes them (HEAD) and has gateways fetch them, so the
// test must not be a string prefix: `…/data` must not take in `…/data-private/x`, and
// `…/data/../admin/x` must not pass as `…/data` (fetch and gateways would resolve the dots).
// Pure: the URL text in, a yes or no out.

interface Parts {
  readonly origin: string;
  readonly segments: readonly string[];
}

/** Decoded, `.` and `..` are refused anywhere in the path (also as %2e). */
const DOT = /^\.{1,2}$/;

function parts(text: string): Parts | undefined {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)/i.exec(text);
  if (!m) return undefined;
  const segments: string[] = [];
  for (const raw of m[3]!.split('/')) {
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (DOT.test(seg) || seg.includes('/') || seg.includes('\\')) return undefined;
    if (seg !== '') segments.push(seg);
  }
  return { origin: `${m[1]!.toLowerCase()}://${m[2]!.toLowerCase()}`, segments };
}

/** True when `url` is `prefix` or below it, segment by segment, with no dot segment. */
export function withinPrefix(url: string, prefix: string): boolean {
  const u = parts(url);
  const p = parts(prefix);
  if (!u || !p || u.origin !== p.origin || u.segments.length < p.segments.length) return false;
  return p.segments.every((s, i) => u.segments[i] === s);
}

/** The prefix's depth in segments: the longest (deepest) matching location wins. */
export function prefixDepth(prefix: string): number {
  return parts(prefix)?.segments.length ?? -1;
}

/** True when `to` (a redirect's target) is on the same origin as `from`, with no dot segment. */
export function sameOrigin(from: string, to: string): boolean {
  const a = parts(from);
  const b = parts(to);
  return a !== undefined && b !== undefined && a.origin === b.origin;
}
