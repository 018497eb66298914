// HTTP-date (RFC 9110 §5.6.7), parsed strictly: IMF-fixdate, and the two obsolete forms a
// recipient must still accept (RFC 850 with a two-digit year, and C's asctime). Anything else —
// "UTC" for "GMT", a one-digit hour, a missing comma, several values — is invalid, which the
// freshness rules turn into "already expired" (Expires) or "no lifetime" (Date). Names of days,
// months and "GMT" match case-insensitively, as RFC 9111 §4.2 asks of a cache. Pure.

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY = '(?:mon|tue|wed|thu|fri|sat|sun)';
const DAY_LONG = '(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)';
const MONTH = '(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)';
const TIME = '(\\d\\d):(\\d\\d):(\\d\\d)';

/** Sun, 06 Nov 1994 08:49:37 GMT */
const IMF = new RegExp(`^${DAY}, (\\d\\d) ${MONTH} (\\d{4}) ${TIME} GMT$`, 'i');
/** Sunday, 06-Nov-94 08:49:37 GMT */
const RFC850 = new RegExp(`^${DAY_LONG}, (\\d\\d)-${MONTH}-(\\d\\d) ${TIME} GMT$`, 'i');
/** Sun Nov  6 08:49:37 1994 (the day is space-padded) */
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`, 'i');

/**
 * RFC 9110 §5.6.7: a two-digit year that would put the date more than 50 years in the future
 * means the most recent past year with those two last digits.
 */
export function fullYear(twoDigits: number, now: number): number {
  const thisYear = new Date(now).getUTCFullYear();
  let year = Math.floor(thisYear / 100) * 100 + twoDigits;
  if (year > thisYear + 50) year -= 100;
  else if (year < thisYear - 49) year += 100;
  return year;
}

type Field = string;

function build(year: number, month: Field, day: Field, h: Field, m: Field, s: Field): number | undefined {
  const mon = MONTHS.indexOf(month.toLowerCase());
  const [d, hh, mm, ss] = [Number(day), Number(h), Number(m), Number(s)];
  // The grammar allows a leap second (60); the clock it names is the next second's.
  if (hh > 23 || mm > 59 || ss > 60 || d < 1) return undefined;
  const t = Date.UTC(year, mon, d, hh, mm, 0);
  // Date.UTC rolls 31 Feb over into March; such a date does not exist.
  if (new Date(t).getUTCDate() !== d) return undefined;
  return t + ss * 1000;
}

/** Milliseconds since the epoch, or undefined when `text` is not an HTTP-date. */
export function parseHttpDate(text: string, now = Date.now()): number | undefined {
  let m = IMF.exec(text);
  if (m) return build(Number(m[3]), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = RFC850.exec(text);
  if (m) return build(fullYear(Number(m[3]), now), m[2]!, m[1]!, m[4]!, m[5]!, m[6]!);
  m = ASCTIME.exec(text);
  if (m) return build(Number(m[6]), m[1]!, m[2]!.trim(), m[3]!, m[4]!, m[5]!);
  return undefined;
}
