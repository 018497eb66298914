// JSON bytes as Python's json.dumps writes them with its defaults, for Shoal's endpoints only.
// Shoal clients do not parse JSON: shoal-client reads /nearest* answers with regular expressions
// such as `"load": ([^,}]+)` and `"hostname": ([^,]+)[,|}]`, which match only with json.dumps's
// separators (", " and ": "). Its other habits are kept too, so an answer is byte for byte what a
// Shoal server would send for the same caches: floats always carry a point or an exponent
// (`0.0`, `1e-05`, `1e+16`), and everything outside printable ASCII is written as \uXXXX
// (ensure_ascii). Pure.

/** A number Shoal holds as a Python float (times, coordinates, costs): printed as Python's repr. */
export class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

export function pyFloat(value: number): PyFloat {
  return new PyFloat(value);
}

/**
 * Python's float repr: the shortest digits that round-trip (which JavaScript computes too), in
 * fixed notation for exponents from -5 to 15 and scientific notation outside, with a sign and
 * at least two exponent digits.
 */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa, expText] = Math.abs(x).toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    return `${sign}${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const digits = mantissa.replace('.', '');
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  return `${sign}${whole}.${digits.slice(exp + 1) || '0'}`;
}

function pyString(s: string): string {
  return JSON.stringify(s).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function pyNumber(n: number): string {
  // A whole JavaScript number stands for a Python int (ports, counts, loads sent as integers).
  return Number.isSafeInteger(n) ? String(n) : pyFloatRepr(n);
}

/** json.dumps(value) with Python's default separators, ensure_ascii and float repr. */
export function pyDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof PyFloat) return pyFloatRepr(value.value);
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return pyNumber(value);
    case 'string':
      return pyString(value);
    default:
      break;
  }
  if (Array.isArray(value)) return `[${value.map(pyDumps).join(', ')}]`;
  const parts = Object.entries(value as Record<string, unknown>).map(
    ([k, v]) => `${pyString(k)}: ${pyDumps(v)}`,
  );
  return `{${parts.join(', ')}}`;
}
