// Telling a refusing broker from an absent one, on the exact error texts amqplib 2 produces (taken
// from RabbitMQ 3.10 answers; test/agent/amqp-auth.test.ts and test/discovery/amqp-auth.test.ts
// meet them for real).

import { describe, expect, it } from 'vitest';
import { amqpRefusal, brokerParts, refusalMessage } from '../../lib/amqp-refusal.ts';

const LOGIN =
  'Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."';
const VHOST = 'Expected ConnectionOpenOk; got <ConnectionClose channel:0>';
const CHANNEL =
  'Channel closed by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - access to exchange \'shoal\' in vhost \'/\' refused for user \'agent\'"';

describe('amqpRefusal', () => {
  it('reads a refused login, a refused virtual host and a refused operation', () => {
    expect(amqpRefusal(new Error(LOGIN))).toEqual({
      kind: 'login',
      detail: 'ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile.',
    });
    expect(amqpRefusal(new Error(VHOST))?.kind).toBe('vhost');
    expect(amqpRefusal(new Error(CHANNEL))).toEqual({
      kind: 'permission',
      detail: "ACCESS_REFUSED - access to exchange 'shoal' in vhost '/' refused for user 'agent'",
    });
  });

  it('leaves everything else to "cannot reach the broker"', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5672'), { code: 'ECONNREFUSED' });
    expect(amqpRefusal(refused)).toBeUndefined();
    expect(amqpRefusal(new Error('Socket closed abruptly during opening handshake'))).toBeUndefined();
    expect(amqpRefusal(new Error('Channel closed by server: 404 (NOT-FOUND) with message "NOT_FOUND - no exchange"'))).toBeUndefined();
  });
});

describe('refusalMessage', () => {
  it('names the broker, the user and the virtual host, never the password', () => {
    const url = 'amqp://agent%40kek:s3cret@mq.example.org:5671/cvmfs%2Fsites';
    expect(brokerParts(url)).toEqual({ where: 'amqp://mq.example.org:5671', user: 'agent@kek', vhost: 'cvmfs/sites' });
    for (const text of [LOGIN, VHOST, CHANNEL]) {
      const m = refusalMessage(amqpRefusal(new Error(text))!, url);
      expect(m).toContain('amqp://mq.example.org:5671');
      expect(m).toContain('"agent@kek"');
      expect(m).not.toContain('s3cret');
    }
    expect(refusalMessage({ kind: 'vhost', detail: '' }, url)).toContain('virtual host "cvmfs/sites"');
    expect(brokerParts('amqp://mq.example.org').user).toBe('guest');
    expect(brokerParts('amqp://mq.example.org').vhost).toBe('/');
  });
});
