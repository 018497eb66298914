// A listing seen through a credential's scopes: what the store answered to ListObjects (V1, V2) or
// ListMultipartUploads, less every key the credential may not read, and less every common prefix
// that is neither readable nor on the way to a readable prefix. So a credential for
// `kek-data/run42/` can list the bucket's root (s3fs checks a bucket that way; a mount walks down
// from it) and sees `run42/` there, but no name outside its scopes. Pure.

import { allowed, type Scope } from './credentials.ts';
import { unescapeXml } from './route.ts';


/** Whether the credential may see a listed name: readable itself, or an ancestor of a scope. */
function visible(scopes: readonly Scope[], bucket: string, name: string, isPrefix: boolean): boolean {
  if (allowed(scopes, { bucket, key: name, write: false })) return true;
  return isPrefix && scopes.some((s) => s.bucket === bucket && s.prefix.startsWith(name));
}

export function filterListing(xml: string, scopes: readonly Scope[], bucket: string, urlEncoded: boolean): string {
  const nameOf = (raw: string) => {
    const text = unescapeXml(raw);
    if (!urlEncoded) return text;
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      return text;
    }
  };
  let kept = 0;
  let out = xml.replace(/<(Contents|Upload)>([\s\S]*?)<\/\1>/g, (block, _tag: string, inner: string) => {
    const key = /<Key>([^<]*)<\/Key>/.exec(inner)?.[1];
    if (key === undefined || !visible(scopes, bucket, nameOf(key), false)) return '';
    kept++;
    return block;
  });
  out = out.replace(/<CommonPrefixes>([\s\S]*?)<\/CommonPrefixes>/g, (block, inner: string) => {
    const p = /<Prefix>([^<]*)<\/Prefix>/.exec(inner)?.[1];
    if (p === undefined || !visible(scopes, bucket, nameOf(p), true)) return '';
    kept++;
    return block;
  });
  return out.replace(/<KeyCount>\d+<\/KeyCount>/, `<KeyCount>${kept}</KeyCount>`);
}
