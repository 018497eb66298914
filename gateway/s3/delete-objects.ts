// DeleteObjects (POST /bucket?delete) through a scope. The batch is parsed strictly and the store
// gets a body rebuilt from what was parsed, never the client's bytes: a checker that reads the XML
// differently from the store (CDATA, comments, namespace prefixes) would otherwise let a key past
// the scope check that the store then deletes. Keys the credential may not delete are answered as
// S3 answers them, one `<Error>` per key in the result, and only the others are sent. Pure.

import { createHash } from 'node:crypto';
import { unescapeXml } from './route.ts';
import { xmlEscape } from '../http/xml.ts';

/** S3's limit on one DeleteObjects batch. */
export const MAX_DELETE_KEYS = 1000;

export interface DeleteEntry {
  readonly key: string;
  /** VersionId and the conditional-delete fields, as text, in the order given. */
  readonly fields: readonly (readonly [string, string])[];
}

export interface DeleteBatch {
  readonly quiet: boolean;
  readonly entries: readonly DeleteEntry[];
}

const OBJECT_FIELDS = new Set(['VersionId', 'ETag', 'LastModifiedTime', 'Size']);
// Text of a simple element: no markup inside, only the XML entities S3 clients write.
const TEXT = String.raw`[^<&]*(?:&(?:lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);[^<&]*)*`;

/** The batch of a DeleteObjects body, or undefined when it is not a plain, well-formed one. */
export function parseDeleteBatch(xml: string): DeleteBatch | undefined {
  const doc = new RegExp(String.raw`^\s*(?:<\?xml[^?]*\?>\s*)?<Delete(?:\s+xmlns="[^"]*")?\s*>([\s\S]*)</Delete>\s*$`).exec(xml);
  if (!doc) return undefined;
  let rest = doc[1]!;
  let quiet = false;
  const entries: DeleteEntry[] = [];
  const item = new RegExp(String.raw`^\s*(?:<Quiet>\s*(true|false)\s*</Quiet>|<Object>((?:\s*<(\w+)>${TEXT}</\3>)*)\s*</Object>)`);
  while (rest.trim() !== '') {
    const m = item.exec(rest);
    if (!m) return undefined;
    rest = rest.slice(m[0].length);
    if (m[1] !== undefined) {
      quiet = m[1] === 'true';
      continue;
    }
    const fields: [string, string][] = [];
    let key: string | undefined;
    for (const f of m[2]!.matchAll(new RegExp(String.raw`<(\w+)>(${TEXT})</\1>`, 'g'))) {
      const [name, text] = [f[1]!, unescapeXml(f[2]!)];
      if (name === 'Key' && key === undefined) key = text;
      else if (OBJECT_FIELDS.has(name)) fields.push([name, text]);
      else return undefined;
    }
    if (key === undefined) return undefined;
    entries.push({ key, fields });
  }
  if (entries.length === 0 || entries.length > MAX_DELETE_KEYS) return undefined;
  return { quiet, entries };
}

/** The body sent to the store for `entries`, and its Content-MD5 and SHA-256. */
export function deleteBody(quiet: boolean, entries: readonly DeleteEntry[]): { body: Buffer; md5: string; sha256: string } {
  const objects = entries
    .map((e) => `<Object><Key>${xmlEscape(e.key)}</Key>${e.fields.map(([n, v]) => `<${n}>${xmlEscape(v)}</${n}>`).join('')}</Object>`)
    .join('');
  const body = Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>${quiet}</Quiet>${objects}</Delete>`,
  );
  return {
    body,
    md5: createHash('md5').update(body).digest('base64'),
    sha256: createHash('sha256').update(body).digest('hex'),
  };
}

function deniedErrors(denied: readonly DeleteEntry[]): string {
  return denied
    .map((e) => {
      const version = e.fields.find(([n]) => n === 'VersionId');
      const v = version ? `<VersionId>${xmlEscape(version[1])}</VersionId>` : '';
      return `<Error><Key>${xmlEscape(e.key)}</Key>${v}<Code>AccessDenied</Code><Message>Access Denied</Message></Error>`;
    })
    .join('');
}

/** A DeleteResult of only the refused keys (when nothing was sent to the store). */
export function deniedResult(denied: readonly DeleteEntry[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${deniedErrors(denied)}</DeleteResult>`;
}

/** The store's DeleteResult with an `<Error>` added for each refused key. */
export function mergeDenied(storeXml: string, denied: readonly DeleteEntry[]): string {
  if (denied.length === 0) return storeXml;
  const errors = deniedErrors(denied);
  if (/<DeleteResult[^>]*\/>/.test(storeXml)) return storeXml.replace(/<DeleteResult([^>]*)\/>/, `<DeleteResult$1>${errors}</DeleteResult>`);
  const at = storeXml.lastIndexOf('</DeleteResult>');
  return at === -1 ? storeXml : `${storeXml.slice(0, at)}${errors}${storeXml.slice(at)}`;
}
