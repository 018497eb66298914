// A second line behind ListObjectVersions and ListMultipartUploads for a credential limited to key
// prefixes. Those are only sent to the store with a prefix inside a scope, so the store names
// nothing else; should a store ignore the prefix, every entry (<Version>, <DeleteMarker>,
// <Upload>, <Contents>, <CommonPrefixes>) and every next-marker naming a key outside the scopes
// is removed here. Names are decoded for the check when the answer says it encoded them (its
// <EncodingType>), not when the request asked: s3rver ignores encoding-type. Pure.

import { unescapeXml } from './route.ts';

function nameOf(raw: string, urlEncoded: boolean): string {
  const text = unescapeXml(raw);
  if (!urlEncoded) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

export function filterListing(xml: string, scopes: readonly string[]): string {
  const urlEncoded = /<EncodingType>url<\/EncodingType>/.test(xml);
  const inScope = (raw: string) => {
    const name = nameOf(raw, urlEncoded);
    return scopes.some((s) => name.startsWith(s));
  };
  return xml
    .replace(/<(Contents|Upload|Version|DeleteMarker)>([\s\S]*?)<\/\1>/g, (block, _tag: string, inner: string) => {
      const key = /<Key>([^<]*)<\/Key>/.exec(inner)?.[1];
      return key !== undefined && inScope(key) ? block : '';
    })
    .replace(/<CommonPrefixes>([\s\S]*?)<\/CommonPrefixes>/g, (block, inner: string) => {
      const p = /<Prefix>([^<]*)<\/Prefix>/.exec(inner)?.[1];
      return p !== undefined && inScope(p) ? block : '';
    })
    .replace(/<(NextKeyMarker|NextMarker)>([^<]*)<\/\1>/g, (el, _tag: string, v: string) => (inScope(v) ? el : ''));
}
