// Attack: what a listing's keys can hold once the server encodes them (encoding-type=url) or
// ignores the request to: U+FFFD that is really in the key, bytes that are not UTF-8, control
// characters, `+` and `%`, the same key on two pages, a key and a prefix of one name, thousands
// of common prefixes. Read through the mount's filesystem layer (no FUSE), as readdir sees it.

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { filesystemAt, listing, type SeenRequest, startLyingServer } from './lying-s3.ts';

afterAll(runTeardowns);

const pages = (...bodies: string[]) => (req: SeenRequest) => {
  if (req.url.searchParams.get('list-type') !== '2') return { status: 404 };
  const token = req.url.searchParams.get('continuation-token');
  return { body: bodies[token === null ? 0 : Number(token)]! };
};

const names = async (endpoint: string) => (await (await filesystemAt(endpoint)).readdir('/')).map((e) => e.name).sort();

describe('keys in listings', () => {
  // Expected: `a\uFFFDb` is a valid UTF-8 key (EF BF BD, a name such as lossy converters leave)
  // and can be named in every request, so readdir shows it; docs/SEMANTICS.md leaves out only
  // "Keys that are not valid UTF-8". Only `c\xFFd` (not UTF-8) is left out. Today both are
  // left out: the decoded key is judged by whether it holds U+FFFD, so the real one is hidden.
  it('a key that really holds U+FFFD is shown; one whose bytes are not UTF-8 is not', async () => {
    const server = await startLyingServer(pages(listing(['a%EF%BF%BDb', 'c%FFd', 'plain'], [], '<EncodingType>url</EncodingType>')));
    expect(await names(server.endpoint)).toEqual(['a\uFFFDb', 'plain']);
  });

  // Expected the same for a server that ignores encoding-type (s3rver) and sends the key raw.
  it('a raw key holding U+FFFD from a server that does not encode is shown', async () => {
    const server = await startLyingServer(pages(listing(['a\uFFFDb', 'plain'])));
    expect(await names(server.endpoint)).toEqual(['a\uFFFDb', 'plain']);
  });

  // Holds today: control characters, `+`, `%` and spaces decoded from an encoded listing.
  it('encoded control characters, plus, percent and space', async () => {
    const keys = ['ctl%01x', 'esc%1B%5B31m', 'plus%2B', 'pct%25', 'two+words', 'bad%ZZ'];
    const server = await startLyingServer(pages(listing(keys, [], '<EncodingType>url</EncodingType>')));
    expect(await names(server.endpoint)).toEqual(['bad%ZZ', 'ctl\x01x', 'esc\x1b[31m', 'pct%', 'plus+', 'two words'].sort());
  });

  // Holds today: the same key on two pages is one name; a key and a prefix of one name are both
  // shown (the object under a stand-in); 5000 common prefixes all become directories.
  it('duplicates across pages, a key beside a prefix of its name, thousands of prefixes', async () => {
    const many = Array.from({ length: 5000 }, (_, i) => `d${i}/`);
    const server = await startLyingServer(
      pages(
        listing(['x', 'same'], ['same/'], '<IsTruncated>true</IsTruncated><NextContinuationToken>1</NextContinuationToken>'),
        listing(['same', 'y'], many),
      ),
    );
    const got = await names(server.endpoint);
    expect(got.filter((n) => /^d\d+$/.test(n))).toHaveLength(5000);
    expect(got).toEqual(expect.arrayContaining(['x', 'y', 'same']));
    expect(got.filter((n) => n.startsWith('unnamable-'))).toHaveLength(1);
    expect(got).toHaveLength(5000 + 4);
  });

  // Holds today: every control character, encoded, is a name of its own; NUL, which no POSIX
  // name can hold, is shown under a stand-in.
  it('every control character from an encoded listing', async () => {
    const codes = [...Array.from({ length: 32 }, (_, i) => i), 0x7f];
    const hex = (c: number) => `%${c.toString(16).padStart(2, '0').toUpperCase()}`;
    const server = await startLyingServer(pages(listing(codes.map((c) => `c${hex(c)}x`), [], '<EncodingType>url</EncodingType>')));
    const got = await names(server.endpoint);
    expect(got).toHaveLength(codes.length);
    for (const c of codes.slice(1)) expect(got).toContain(`c${String.fromCharCode(c)}x`);
    expect(got.filter((n) => n.startsWith('unnamable-'))).toHaveLength(1);
  });
});
