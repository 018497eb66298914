import { describe, expect, it } from 'vitest';
import { s3ErrorXml, xmlEscape } from '../../../gateway/http/xml.ts';

describe('gateway XML', () => {
  it("writes S3's error document with its fields in order, every text escaped", () => {
    expect(s3ErrorXml('NoSuchKey', 'a <b> & "c"', { Resource: "/bkt/x'y\r", RequestId: 'R1' })).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>a &#60;b&#62; &#38; &#34;c&#34;</Message>' +
        '<Resource>/bkt/x&#39;y&#13;</Resource><RequestId>R1</RequestId></Error>',
    );
  });

  it('writes numbers as they are', () => {
    expect(s3ErrorXml('InvalidRange', 'no', { ActualObjectSize: 0 })).toContain('<ActualObjectSize>0</ActualObjectSize></Error>');
  });

  it('leaves text without markup characters alone', () => {
    expect(xmlEscape('run42/a b+c%20')).toBe('run42/a b+c%20');
  });
});
