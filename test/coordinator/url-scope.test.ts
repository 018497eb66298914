// Inputs named in job comments are sized and pre-warmed only inside a storage location: matched
// by path segment, dot segments refused, and no redirect followed off the location's origin
// (checked against two real HTTP servers on loopback).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locationOf } from '../../coordinator/cost.ts';
import { GatewayData } from '../../coordinator/data-gateway.ts';
import { withinPrefix } from '../../coordinator/url-scope.ts';

describe('inside a storage location', () => {
  it.each([
    ['https://h.example/data/x', 'https://h.example/data', true],
    ['https://h.example/data', 'https://h.example/data/', true],
    ['https://h.example/data-private/x', 'https://h.example/data', false],
    ['https://h.example/data/../admin/nosize', 'https://h.example/data', false],
    ['https://h.example/data/%2e%2e/admin/secret', 'https://h.example/data', false],
    ['https://h.example/data/./x', 'https://h.example/data', false],
    ['https://h.example/data%2fx', 'https://h.example/data', false],
    ['https://H.EXAMPLE/data/x', 'https://h.example/data', true],
    ['https://h.example:8443/data/x', 'https://h.example/data', false],
    ['https://h.example.evil/data/x', 'https://h.example', false],
    ['s3://kek/run42', 's3://kek/', true],
    ['s3://kek-aws/run42', 's3://kek', false],
    ['s3://kek//run42', 's3://kek/run42', true],
  ])('%s under %s: %s', (url, prefix, inside) => {
    expect(withinPrefix(url, prefix)).toBe(inside);
  });

  it('the deepest location wins', () => {
    const storage = [
      { name: 'all', urls: ['s3://kek/'], egressPerGb: 0 },
      { name: 'deep', urls: ['s3://kek/run42'], egressPerGb: 0.09 },
    ];
    expect(locationOf('s3://kek/run42/a', storage)?.name).toBe('deep');
    expect(locationOf('s3://kek/run420/a', storage)?.name).toBe('all');
    expect(locationOf('s3://kek/run42/../x', storage)).toBeUndefined();
  });
});

describe('sizing an input by HEAD', () => {
  let home: Server;
  let other: Server;
  let otherHits = 0;
  const url = (s: Server, path: string) => `http://127.0.0.1:${(s.address() as AddressInfo).port}${path}`;
  beforeAll(async () => {
    other = createServer((_req, res) => {
      otherHits++;
      res.writeHead(200, { 'content-length': '999' }).end();
    });
    home = createServer((req, res) => {
      if (req.url === '/data/moved') res.writeHead(302, { location: '/data/here' }).end();
      else if (req.url === '/data/away') res.writeHead(302, { location: url(other, '/secret') }).end();
      else res.writeHead(200, { 'content-length': '42' }).end();
    });
    await Promise.all([home, other].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
  });
  afterAll(async () => {
    await Promise.all([home, other].map((s) => new Promise((r) => s.close(r))));
  });

  it('follows a redirect on its own origin, and none to another', async () => {
    const data = new GatewayData([], undefined);
    expect(await data.size(url(home, '/data/moved'))).toBe(42);
    expect(await data.size(url(home, '/data/away'))).toBeUndefined();
    expect(otherHits).toBe(0);
  });
});
