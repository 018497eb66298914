// What the first 2 KiB of an answer to `GET /BUCKET?location` are, with no I/O: S3's XML, a web
// page, or something else, and how to name it in one line. S3 answers that request with
// <LocationConstraint> (or, from a server that ignores `?location`, the bucket listing) and
// refuses it with <Error>; anything else came from something that is not S3.

/** The root elements an S3 server answers the probe with; `Error` is its refusal. */
const S3_ANSWERS = new Set(['LocationConstraint', 'ListBucketResult']);

/**
 * Elements that open an HTML page, also where it leaves out the optional <html> and <head>
 * tags (browsers accept `<title>…` or `<body>…` as a whole page).
 */
const HTML_OPENERS = new Set(['html', 'head', 'body', 'title', 'meta', 'link', 'base', 'script', 'style', 'noscript']);

/** What precedes the root element: an XML declaration, processing instructions, comments, doctypes. */
const PROLOG = /^(?:\s+|\uFEFF|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!doctype[^>]*>)*/i;

/** The root element's local name (namespace prefix dropped), or undefined when the body is not markup. */
export function rootElement(body: string): string | undefined {
  const m = /^<([A-Za-z_][\w.:-]*)/.exec(body.replace(PROLOG, ''));
  return m?.[1]!.replace(/^.*:/, '');
}

/** HTML or XHTML, by its doctype or its first element; a text/html label alone also covers plain-text refusals. */
export function isWebPage(body: string): boolean {
  const prolog = PROLOG.exec(body)?.[0] ?? '';
  if (/<!doctype\s+html/i.test(prolog)) return true;
  const root = rootElement(body);
  return root !== undefined && HTML_OPENERS.has(root.toLowerCase());
}

/** An answer S3 gives to the probe: its XML, not a refusal. */
export const isS3Answer = (body: string): boolean => S3_ANSWERS.has(rootElement(body) ?? '');

/** S3's refusal: <Error><Code>…</Code>…</Error>. */
export const isS3Error = (body: string): boolean => rootElement(body) === 'Error';

/** The body named for a one-line message: "an HTML page", "JSON", "XML <Foo>", `text "OK"`. */
export function describeBody(body: string, contentType: string): string {
  const trimmed = body.trim();
  if (trimmed === '') return 'an empty body';
  if (isWebPage(body)) return 'an HTML page';
  if (/json/i.test(contentType) || /^[{[]/.test(trimmed)) return 'JSON';
  const root = rootElement(body);
  if (root !== undefined) return `XML <${root}>`;
  // One line, printable, short: what a health check or a catch-all says is usually a word or two.
  const shown = trimmed.replace(/\s+/g, ' ').replace(/[^\x20-\x7e]/g, '?');
  return `text "${shown.length > 40 ? `${shown.slice(0, 40)}…` : shown}"`;
}
