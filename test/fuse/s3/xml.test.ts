import { describe, expect, it } from 'vitest';
import { childText, decodeText, escapeText, parseXml, XML_LIMITS, XmlError } from '../../../fuse/s3/xml.ts';

const bad = (text: string) => expect(() => parseXml(text)).toThrow(XmlError);

describe('parseXml', () => {
  it('reads elements, text, entities, character references, CDATA, comments and a declaration', () => {
    const el = parseXml(
      '\ufeff<?xml version="1.0" encoding="UTF-8"?>\n<!-- c --><R a="1" b=\'2\'><K>a&amp;b&lt;&#x1;&#65;</K><C><![CDATA[<x>&amp;]]></C><E/></R>\n',
    );
    expect(el.name).toBe('R');
    expect(childText(el, 'K')).toBe('a&b<\x01A');
    expect(childText(el, 'C')).toBe('<x>&amp;');
    expect(childText(el, 'E')).toBe('');
  });

  it('matches names by their local part, whatever namespace they are in', () => {
    const el = parseXml('<s3:ListBucketResult xmlns:s3="urn:other"><s3:Key>k</s3:Key></s3:ListBucketResult>');
    expect(el.name).toBe('ListBucketResult');
    expect(childText(el, 'Key')).toBe('k');
    bad('<s3:R><s3:Key>k</Key></s3:R>');
  });

  it('refuses a document type declaration, so no entity can be defined (billion laughs)', () => {
    bad('<!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><r>&b;</r>');
    bad('<r>&xxe;</r>');
  });

  it('refuses references to characters XML cannot hold, and a bare &', () => {
    bad('<r>&#0;</r>');
    bad('<r>&#xD800;</r>');
    bad('<r>&#x110000;</r>');
    bad('<r>a & b</r>');
  });

  it('refuses a document cut short anywhere', () => {
    const whole = '<R><Contents><Key>abc</Key><Size>3</Size></Contents></R>';
    for (let cut = 1; cut < whole.length; cut++) expect(() => parseXml(whole.slice(0, cut)), whole.slice(0, cut)).toThrow(XmlError);
    expect(parseXml(whole).children).toHaveLength(1);
  });

  it('refuses crossed tags, two roots, text outside the root and an empty document', () => {
    bad('<a><b></a></b>');
    bad('<a/><b/>');
    bad('junk<a/>');
    bad('<a/>junk');
    bad('');
    bad('<a x=1/>');
    bad('<1a/>');
  });

  it('refuses a document over its size and depth limits', () => {
    bad(`<a>${'x'.repeat(XML_LIMITS.maxChars)}</a>`);
    const deep = XML_LIMITS.maxDepth + 1;
    bad(`${'<a>'.repeat(deep)}${'</a>'.repeat(deep)}`);
    expect(() => parseXml(`${'<a>'.repeat(XML_LIMITS.maxDepth)}${'</a>'.repeat(XML_LIMITS.maxDepth)}`)).not.toThrow();
  });

  it('reads a page of 1000 keys quickly', () => {
    const page = `<R>${Array.from({ length: 1000 }, (_, i) => `<Contents><Key>dir/file-${i}&amp;</Key><Size>${i}</Size></Contents>`).join('')}</R>`;
    const t = performance.now();
    expect(parseXml(page).children).toHaveLength(1000);
    expect(performance.now() - t).toBeLessThan(500);
  });
});

describe('escapeText', () => {
  it('round-trips through the parser, line ends included', () => {
    const s = `a&b<c>"d'\r\n\u2028e`;
    expect(childText(parseXml(`<r><k>${escapeText(s)}</k></r>`), 'k')).toBe(s);
    expect(decodeText(escapeText(s))).toBe(s);
  });
});
