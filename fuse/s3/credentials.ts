// The credentials the mount signs with. Static ones — given to the client, or AWS_ACCESS_KEY_ID /
// AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN) — are read directly. Only without them is the AWS
// SDK's provider chain loaded (profiles, SSO, web identity, the instance's role, credential
// processes): it costs ~13 MB of memory, which a mount with keys in its environment never pays.
//
// What the chain gives may expire (a role's keys last an hour or so): they are kept until five
// minutes before their expiration, then asked for again, as the SDK's clients do; callers asking
// at the same time share one request.

import type { Credentials } from './http-exchange.ts';

export type CredentialSource = () => Promise<Credentials>;

/** What the SDK's provider chain hands out: the keys, and when they stop working, if ever. */
export interface ExpiringCredentials extends Credentials {
  readonly expiration?: Date;
}

export type Provider = () => Promise<ExpiringCredentials>;

/** Keys this close to their expiration are replaced before they are used again. */
export const REFRESH_BEFORE_MS = 5 * 60_000;

/** The AWS SDK's chain (what its clients use by default), loaded on first use. */
async function nodeProviderChain(): Promise<Provider> {
  const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
  return defaultProvider();
}

/** Calls `provider` again only when what it gave last is within REFRESH_BEFORE_MS of expiring. */
export function refreshing(provider: () => Promise<Provider>, now: () => number = Date.now): CredentialSource {
  let chain: Promise<Provider> | undefined;
  let held: ExpiringCredentials | undefined;
  let asking: Promise<ExpiringCredentials> | undefined;
  const fresh = (c: ExpiringCredentials) =>
    c.expiration === undefined || c.expiration.getTime() - now() > REFRESH_BEFORE_MS;
  return async () => {
    if (held && fresh(held)) return held;
    asking ??= (async () => {
      try {
        chain ??= provider();
        held = await (await chain)();
        return held;
      } catch (err) {
        // A chain that could not load may load next time (the package missing is reported then).
        chain = undefined;
        throw err;
      } finally {
        asking = undefined;
      }
    })();
    return asking;
  };
}

export function credentialSource(
  given: Credentials | undefined,
  env: Readonly<Record<string, string | undefined>>,
  chain: () => Promise<Provider> = nodeProviderChain,
): CredentialSource {
  const fixed: Credentials | undefined =
    given ??
    (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
          accessKeyId: env.AWS_ACCESS_KEY_ID,
          secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
          ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
        }
      : undefined);
  if (fixed) return () => Promise.resolve(fixed);
  return refreshing(chain);
}
