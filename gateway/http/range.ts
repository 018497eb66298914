// Range requests (RFC 9110 §14.2): one byte range is served; several ranges, other units or a
// malformed header are ignored and the whole object is sent, as the RFC allows. Pure.

export type RangeResult =
  | { readonly kind: 'none' }
  | { readonly kind: 'range'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

const NO_RANGE: RangeResult = { kind: 'none' };

export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return NO_RANGE;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'none' };
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return { kind: 'none' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end };
}

/** The first byte a range needs, known before the size is, so a fill can start answering early. */
export function rangeStart(header: string | undefined): number | undefined {
  const m = header === undefined ? null : /^\s*bytes\s*=\s*(\d+)\s*-\s*(\d*)\s*$/i.exec(header);
  return m ? Number(m[1]) : undefined;
}
