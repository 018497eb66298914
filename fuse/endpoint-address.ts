// What `--endpoint` may be, with no I/O. Two addresses pass a URL parser and still cannot mean
// an S3 endpoint: port 0, which the AWS SDK reads as "no port" and so connects to 80 (or 443), a
// port the user never gave; and a user name or password in the URL, which S3 never reads (it
// signs requests with the AWS credentials) and which would otherwise be printed in the log and
// stored in the write-back journal's identity file.

import { url, type ValueType, ValueError } from '../lib/config/values.ts';
import type { EstuaryError } from '../lib/errors.ts';
import { fsErrors } from './errors.ts';

/** The --endpoint value: an http:// or https:// URL whose port, if given, is 1-65535. */
export const endpointUrl = (): ValueType<string> => {
  const base = url();
  return {
    ...base,
    parse(raw) {
      const text = base.parse(raw);
      // URL drops a default port (":80" on http://) but keeps ":0" (and ":00") as "0".
      if (new URL(text).port === '0') throw new ValueError(`expected ${base.expected} with a port from 1 to 65535`);
      return text;
    },
  };
};

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
