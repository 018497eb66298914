import { describe, expect, it } from 'vitest';
import { s3Decision, s3Vary } from '../../../gateway/cache/s3-rules.ts';

describe('what is stored of an S3 object', () => {
  it('stores a 200 with a length unless it says no-store or is SSE-C', () => {
    const len = { 'content-length': '5' };
    expect(s3Decision(200, len)).toEqual({ store: true });
    expect(s3Decision(404, len)).toEqual({ store: false, reason: 's3-status' });
    expect(s3Decision(200, { ...len, 'cache-control': 'max-age=0, no-store' })).toEqual({ store: false, reason: 'no-store' });
    expect(s3Decision(200, { ...len, 'x-amz-server-side-encryption-customer-algorithm': 'AES256' })).toEqual({ store: false, reason: 'sse-c' });
  });
  it('never stores an answer without a length (chunked, or ended by a close): a cut body would look whole', () => {
    expect(s3Decision(200, {})).toEqual({ store: false, reason: 'no-length' });
    expect(s3Decision(200, { 'transfer-encoding': 'chunked' })).toEqual({ store: false, reason: 'no-length' });
    expect(s3Decision(206, { 'content-length': '1, 2' }, true)).toEqual({ store: false, reason: 'no-length' });
    expect(s3Decision(206, { 'content-length': '0' }, true)).toEqual({ store: true });
  });
  it('varies on what the store names, less Accept-Encoding', () => {
    expect(s3Vary('Origin, Accept-Encoding')).toBe('Origin');
    expect(s3Vary(['accept-encoding'])).toBeUndefined();
    expect(s3Vary(undefined)).toBeUndefined();
    expect(s3Vary('Origin,X-Custom')).toBe('Origin, X-Custom');
  });
});
