// What `--endpoint` may be, with no I/O, beyond the URL every option takes (lib/config/values.ts
// `url`, which refuses port 0): no user name or password, which S3 never reads (it signs requests
// with the AWS credentials) and which would otherwise be printed in the log and stored in the
// write-back journal's identity file.

import type { EstuaryError } from '../lib/errors.ts';
import { fsErrors } from './errors.ts';

/** A URL's scheme and `user:password@` (up to the last `@` before the host). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/** `endpoint` with its password (and user name) shown as `***`, for messages. */
export const maskUserinfo = (endpoint: string): string => endpoint.replace(USERINFO, '$1***@');

/** `endpoint` without user name and password: the store it names (`aws` stays `aws`). */
export const withoutUserinfo = (endpoint: string): string => endpoint.replace(USERINFO, '$1');

/** The refusal for an endpoint carrying a user name or password, or undefined. */
export function userinfoError(endpoint: string): EstuaryError | undefined {
  const u = new URL(endpoint);
  if (u.username === '' && u.password === '') return undefined;
  return fsErrors.endpointUserinfo(maskUserinfo(endpoint));
}
