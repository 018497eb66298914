// The DeleteObjects batch as the gateway reads and rebuilds it, without a network.

import { describe, expect, it } from 'vitest';
import { deleteBody, deniedResult, mergeDenied, parseDeleteBatch } from '../../../gateway/s3/delete-objects.ts';

describe('DeleteObjects batches', () => {
  it('reads what the SDKs send, entities and versions included', () => {
    const b = parseDeleteBatch(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>a &amp; b&#46;txt</Key><VersionId>v1</VersionId></Object>\n  <Object><Key>c</Key></Object><Quiet>true</Quiet></Delete>',
    );
    expect(b).toEqual({ quiet: true, entries: [{ key: 'a & b.txt', fields: [['VersionId', 'v1']] }, { key: 'c', fields: [] }] });
  });

  it('refuses what a store could read differently', () => {
    for (const xml of [
      '<Delete><Object><Key><![CDATA[x]]></Key></Object></Delete>',
      '<Delete><Object><Key>a<!-- -->b</Key></Object></Delete>',
      '<Delete><Object><s3:Key>x</s3:Key></Object></Delete>',
      '<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>',
      '<Delete><Object><Key>a</Key><Other>b</Other></Object></Delete>',
      '<Delete><Object><Key>a&bogus;</Key></Object></Delete>',
      '<Delete></Delete>',
      `<Delete>${'<Object><Key>k</Key></Object>'.repeat(1001)}</Delete>`,
      '<Delete><Object><Key>a</Key></Object></Delete><Delete><Object><Key>b</Key></Object></Delete>',
    ]) expect(parseDeleteBatch(xml), xml.slice(0, 60)).toBeUndefined();
  });

  it('rebuilds a body that reads back the same, and merges the refused keys into the answer', () => {
    const entries = [{ key: 'run42/<&>"\'\r', fields: [['VersionId', 'v'] as const] }];
    const { body, md5 } = deleteBody(false, entries);
    expect(parseDeleteBatch(body.toString())).toEqual({ quiet: false, entries });
    expect(md5).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    const merged = mergeDenied('<DeleteResult><Deleted><Key>a</Key></Deleted></DeleteResult>', [{ key: 'x', fields: [] }]);
    expect(merged).toBe('<DeleteResult><Deleted><Key>a</Key></Deleted><Error><Key>x</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error></DeleteResult>');
    expect(mergeDenied('<DeleteResult xmlns="n"/>', [{ key: 'x', fields: [] }])).toMatch(/^<DeleteResult xmlns="n"><Error>.*<\/DeleteResult>$/);
    expect(deniedResult([{ key: 'x', fields: [] }])).toMatch(/<Error><Key>x<\/Key><Code>AccessDenied<\/Code>/);
  });

  it('parses a full batch of long keys quickly', () => {
    const xml = `<Delete>${Array.from({ length: 1000 }, (_, i) => `<Object><Key>run42/${'k'.repeat(900)}${i}</Key></Object>`).join('')}</Delete>`;
    const t = performance.now();
    expect(parseDeleteBatch(xml)?.entries).toHaveLength(1000);
    // Milliseconds when idle; the bound only catches backtracking, which would take minutes.
    expect(performance.now() - t).toBeLessThan(5000);
    const t2 = performance.now();
    expect(parseDeleteBatch(`<Delete><Object><Key>${'a&amp;'.repeat(50_000)}<</Key></Object></Delete>`)).toBeUndefined();
    expect(performance.now() - t2).toBeLessThan(5000);
  });
});
