// Telling "the broker refused us" from "the broker is not there", for the agent and discovery. A
// refusal does not heal by waiting: the user, password or permissions must change, so it is said
// as such (and at start-up ends the command) instead of being retried as if the network were down.
//
// amqplib reports refusals as plain Errors whose text carries the AMQP reply (lib/connection.js):
// a wrong user or password closes the connection during the handshake with 403 ACCESS_REFUSED
// ("Handshake terminated by server: 403 (ACCESS-REFUSED) with message ..."); a user without access
// to the virtual host, or a virtual host that does not exist, gets connection.close (530
// NOT_ALLOWED) in answer to connection.open, which amqplib words "Expected ConnectionOpenOk; got
// <ConnectionClose ...>"; a user without permissions on the exchange has its channel closed with
// 403 ACCESS_REFUSED. Pure: no I/O.

export type RefusalKind = 'login' | 'vhost' | 'permission';

export interface AmqpRefusal {
  readonly kind: RefusalKind;
  /** The broker's own words when it gave any. */
  readonly detail: string;
}

export function amqpRefusal(err: unknown): AmqpRefusal | undefined {
  const text = err instanceof Error ? err.message : String(err);
  const said = /with message "([^"]*)"/.exec(text)?.[1] ?? text;
  if (/^Handshake terminated by server: 403\b/.test(text)) return { kind: 'login', detail: said };
  if (/^Expected ConnectionOpenOk; got <ConnectionClose/.test(text)) return { kind: 'vhost', detail: said };
  if (/\b403 \(ACCESS-REFUSED\)/.test(text)) return { kind: 'permission', detail: said };
  return undefined;
}

/** The broker URL without its password, and the user and virtual host it names. */
export function brokerParts(url: string): { where: string; user: string; vhost: string } {
  const u = new URL(url);
  const vhost = u.pathname.length > 1 ? decodeURIComponent(u.pathname.slice(1)) : '/';
  return { where: `${u.protocol}//${u.host}`, user: decodeURIComponent(u.username) || 'guest', vhost };
}

/** One sentence: what the broker refused and what to check. */
export function refusalMessage(r: AmqpRefusal, url: string): string {
  const { where, user, vhost } = brokerParts(url);
  switch (r.kind) {
    case 'login':
      return (
        `the AMQP broker at ${where} refused the login of user "${user}" (authentication refused, not unreachable); ` +
        'check the user name and password in --amqp (amqp://USER:PASSWORD@HOST) and that the user exists on the broker (rabbitmqctl list_users)'
      );
    case 'vhost':
      return (
        `the AMQP broker at ${where} refused user "${user}" access to virtual host "${vhost}"; ` +
        `check the virtual host in --amqp and the user's permissions there (rabbitmqctl list_permissions -p ${vhost})`
      );
    case 'permission':
      return (
        `the AMQP broker at ${where} refused user "${user}" an operation on the exchange: ${r.detail}; ` +
        `give the user configure, write and read permission on the exchange and its own queues (rabbitmqctl set_permissions -p ${vhost} ${user} '.*' '.*' '.*', or narrower)`
      );
  }
}

/**
 * How long a starting role waits for its first broker answer before it carries on: a refusal
 * arrives within a round trip of a broker that answers; one that is slower than this (or down) is
 * retried in the background, and a refusal then is logged and shown instead of ending the role.
 */
export const FIRST_ANSWER_WAIT_MS = 5000;

/** The refusal of the first attempt, or undefined once it connected, failed otherwise, or took too long. */
export async function firstRefusal(
  first: Promise<AmqpRefusal | undefined>,
  waitMs = FIRST_ANSWER_WAIT_MS,
): Promise<AmqpRefusal | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((r) => {
    timer = setTimeout(() => r(undefined), waitMs);
  });
  try {
    return await Promise.race([first, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How long a broker may take to answer the AMQP handshake (amqplib's socket idle timeout, lifted
 * once the connection is open). A port that accepts TCP and then says nothing (a half-dead
 * broker, a load balancer without a backend, another service) would otherwise be waited on
 * forever without a word.
 */
export const AMQP_HANDSHAKE_TIMEOUT_MS = 8000;

/** amqplib's words for that timeout, said so an operator knows what to look at. */
export function handshakeFailure(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text === 'connect ETIMEDOUT'
    ? `no AMQP handshake within ${AMQP_HANDSHAKE_TIMEOUT_MS / 1000} s (is a broker listening on that port?)`
    : text;
}
