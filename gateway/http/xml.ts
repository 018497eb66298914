// The XML the gateway writes itself: S3's error document, which S3 clients parse for the code they
// branch on (the S3 endpoint's own refusals, s3/errors.ts, and the cache's answers for S3 objects,
// proxy/respond.ts), and the text of the elements of its listings and DeleteObjects results.

/** Text safe inside an element or attribute (a carriage return too, which XML parsers would fold). */
export function xmlEscape(s: string): string {
  return s.replace(/[<>&'"\r]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `<Error>` with its Code and Message, then `fields` (such as Resource, Condition) in order, escaped. */
export function s3ErrorXml(code: string, message: string, fields: Readonly<Record<string, string | number>> = {}): string {
  let xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message>`;
  for (const [name, value] of Object.entries(fields)) xml += `<${name}>${xmlEscape(String(value))}</${name}>`;
  return `${xml}</Error>`;
}
