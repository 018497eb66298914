// The credentials the mount signs with. Static ones — given to the client, or AWS_ACCESS_KEY_ID /
// AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN) — are read directly. Only without them is the AWS
// SDK's provider chain loaded (profiles, SSO, web identity, the instance's role, credential
// processes): it costs ~13 MB of memory, which a mount with keys in its environment never pays.
//
// What the chain gives may expire (a role's keys last an hour or so): they are kept until five
// minutes before their expiration, then asked for again, as the SDK's clients do; callers asking
// at the same time share one request.
//
// What goes wrong is named, as bad input: keys in the environment that hold a line break or
// white space at an end (a .env file with CRLF line ends) — the SDK sends them as they are and
// the request cannot be sent; a profile's credential_process whose answer the SDK refused (the
// chain's own error only says it found nothing: the reason is in its debug log, read here); and a
// chain that does not answer within --request-timeout (a credential_process that waits for
// input), which would otherwise hold every request, at start and at each refresh, for good.

import { killChildrenSince, ownChildren } from './child-processes.ts';
import type { Credentials } from './http-exchange.ts';

export type CredentialSource = () => Promise<Credentials>;

/** What the SDK's provider chain hands out: the keys, and when they stop working, if ever. */
export interface ExpiringCredentials extends Credentials {
  readonly expiration?: Date;
}

export type Provider = () => Promise<ExpiringCredentials>;

/** Keys this close to their expiration are replaced before they are used again. */
export const REFRESH_BEFORE_MS = 5 * 60_000;

/** Keys that cannot be used, or a chain that failed or hung; the message says which and what to do. */
export class CredentialsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialsError';
  }
}

const EXPORT_KEYS = 'or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY';

/** Where the SDK's chain is, from its debug log: the step it last entered. */
function stepOf(messages: readonly string[], profile: string): string {
  const last = messages.findLast((m) => /^@aws-sdk\/credential-provider-[\w-]+ - /.test(m)) ?? '';
  const step = /^@aws-sdk\/credential-provider-([\w-]+)/.exec(last)?.[1];
  if (step === 'process') return `the credential_process of AWS profile "${profile}"`;
  if (step === 'ini') return `AWS profile "${profile}"`;
  if (step === 'sso') return `SSO for AWS profile "${profile}"`;
  if (step === 'web-identity') return 'the web identity token (AWS_WEB_IDENTITY_TOKEN_FILE)';
  return 'the AWS credential chain';
}

/**
 * The AWS SDK's chain (what its clients use by default), loaded on first use; each request for
 * keys fails after `waitMs` (if given) with a CredentialsError naming the step it waited on.
 */
export async function nodeProviderChain(waitMs?: number, env: Env = process.env): Promise<Provider> {
  const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
  const messages: string[] = [];
  const quiet = () => undefined;
  const logger = { debug: (m: unknown) => void messages.push(String(m)), info: quiet, warn: quiet, error: quiet, trace: quiet };
  const chain = defaultProvider({ logger });
  const profile = env.AWS_PROFILE || 'default';
  return async () => {
    messages.length = 0;
    let timer: NodeJS.Timeout | undefined;
    const before = ownChildren();
    const asked = chain();
    const late = new Promise<never>((_, fail) => {
      if (waitMs === undefined) return;
      timer = setTimeout(() => {
        // A credential_process still running is given up on: ended, so that it neither holds this
        // process at exit nor piles up with each refresh. The chain then goes on to its next
        // step, which may run the same process again: ended too, until the chain gives up.
        killChildrenSince(before);
        const sweep = setInterval(() => killChildrenSince(before), 100);
        void asked.catch(() => undefined).finally(() => clearInterval(sweep));
        fail(new CredentialsError(`${stepOf(messages, profile)} gave no keys within ${waitMs / 1000} s (--request-timeout); check that it runs without input, ${EXPORT_KEYS}`));
      }, waitMs);
      timer.unref();
    });
    try {
      return await Promise.race([asked, late]);
    } catch (err) {
      if (err instanceof CredentialsError) throw err;
      // The chain says only "Could not load credentials from any providers"; a credential_process
      // that ran and answered wrong said why in the log ("Profile dev credential_process returned
      // invalid JSON.").
      const why = messages.findLast((m) => m.includes('credential_process') && m.startsWith('@smithy/'));
      if (why) throw new CredentialsError(`${why.replace(/^\S+ \S+ /, '').replace(/\.$/, '')}; fix that process or the profile, ${EXPORT_KEYS}`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };
}

/** A key from the environment with what HTTP cannot carry or a stray end: named, not sent. */
function checkKey(name: string, value: string): string {
  let what: string | undefined;
  if (/[\r\n]/.test(value)) what = 'a line break';
  else if (/[\x00-\x1f\x7f]/.test(value)) what = 'a control character';
  else if (value.trim() !== value) what = 'white space at an end';
  if (what)
    throw new CredentialsError(`${name} holds ${what} (a file with CRLF line ends, or a key pasted with its newline, leaves one); remove it`);
  return value;
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

type Env = Readonly<Record<string, string | undefined>>;

/** Throws CredentialsError when keys in the environment cannot be used. */
export function credentialSource(
  given: Credentials | undefined,
  env: Env,
  chain: () => Promise<Provider> = () => nodeProviderChain(),
): CredentialSource {
  const fixed: Credentials | undefined =
    given ??
    (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
          accessKeyId: checkKey('AWS_ACCESS_KEY_ID', env.AWS_ACCESS_KEY_ID),
          secretAccessKey: checkKey('AWS_SECRET_ACCESS_KEY', env.AWS_SECRET_ACCESS_KEY),
          ...(env.AWS_SESSION_TOKEN ? { sessionToken: checkKey('AWS_SESSION_TOKEN', env.AWS_SESSION_TOKEN) } : {}),
        }
      : undefined);
  if (fixed) return () => Promise.resolve(fixed);
  return refreshing(chain);
}
