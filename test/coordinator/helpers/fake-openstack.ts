// A local Keystone v3 + Nova (Compute v2.1) with the request/response subset the openstack site
// uses, written from the published API references: password auth scoped to a project (201,
// X-Subject-Token, a catalog with a public compute endpoint), and servers created (202), listed
// with the regular-expression name filter (/servers and /servers/detail), shown (200/404) and
// deleted (204/404). Servers go BUILD → ACTIVE after `bootMs`. Loopback only.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { onTeardown } from '../../helpers/cleanup.ts';

export interface FakeOpenstack {
  readonly authUrl: string;
  readonly servers: Map<string, { id: string; name: string; status: string; createdAt: number; body: Record<string, unknown> }>;
  /** Tokens issued so far; revoke() makes every one of them invalid (401). */
  readonly tokens: Set<string>;
  revoke(): void;
  /** Every request, "METHOD path". */
  readonly log: string[];
  close(): Promise<void>;
  /** Set createAnswerDelayMs to answer POST /servers that much later (the server is made at once). */
  readonly control: { createAnswerDelayMs: number };
}

const USER = { name: 'estuary', password: 'secret-pw', project: 'burst' };

export async function startFakeOpenstack(bootMs = 200): Promise<FakeOpenstack> {
  const servers: FakeOpenstack['servers'] = new Map();
  const control = { createAnswerDelayMs: 0 };
  const tokens = new Set<string>();
  const log: string[] = [];
  let base = '';
  const send = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };
  const read = async (req: IncomingMessage) => {
    let text = '';
    for await (const c of req) text += c;
    return text ? (JSON.parse(text) as Record<string, any>) : {};
  };
  const view = (s: (typeof servers extends Map<string, infer V> ? V : never)) => {
    if (s.status === 'BUILD' && Date.now() - s.createdAt >= bootMs) s.status = 'ACTIVE';
    return { id: s.id, name: s.name, status: s.status, metadata: s.body.metadata, links: [] };
  };
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', base);
    log.push(`${req.method} ${url.pathname}${url.search}`);
    try {
      if (req.method === 'POST' && url.pathname === '/v3/auth/tokens') {
        const b = await read(req);
        const pw = b.auth?.identity?.password?.user;
        const project = b.auth?.scope?.project;
        if (pw?.name !== USER.name || pw?.password !== USER.password || pw?.domain?.name !== 'Default' || project?.name !== USER.project)
          return send(res, 401, { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } });
        const token = randomUUID().replace(/-/g, '');
        tokens.add(token);
        return send(
          res,
          201,
          {
            token: {
              methods: ['password'],
              expires_at: new Date(Date.now() + 3_600_000).toISOString(),
              project: { name: USER.project, id: 'p1', domain: { name: 'Default', id: 'default' } },
              catalog: [
                { type: 'identity', name: 'keystone', endpoints: [{ interface: 'public', region: 'RegionOne', region_id: 'RegionOne', url: `${base}/v3` }] },
                { type: 'compute', name: 'nova', endpoints: [{ interface: 'public', region: 'RegionOne', region_id: 'RegionOne', url: `${base}/compute/v2.1` }] },
              ],
            },
          },
          { 'x-subject-token': token },
        );
      }
      if (!url.pathname.startsWith('/compute/v2.1/servers')) return send(res, 404, { itemNotFound: { code: 404, message: 'not found' } });
      if (!tokens.has(String(req.headers['x-auth-token'])))
        return send(res, 401, { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } });
      const rest = url.pathname.slice('/compute/v2.1/servers'.length);
      if (req.method === 'GET' && (rest === '' || rest === '/detail')) {
        const filter = url.searchParams.get('name');
        const re = filter ? new RegExp(filter) : undefined;
        const list = [...servers.values()].filter((s) => !re || re.test(s.name)).map(view);
        return send(res, 200, { servers: rest === '' ? list.map(({ id, name, links }) => ({ id, name, links })) : list });
      }
      if (req.method === 'POST' && rest === '') {
        const b = (await read(req)).server ?? {};
        if (!b.name || !b.flavorRef || !b.imageRef) return send(res, 400, { badRequest: { code: 400, message: 'name, flavorRef and imageRef are required' } });
        const id = randomUUID();
        servers.set(id, { id, name: b.name, status: 'BUILD', createdAt: Date.now(), body: b });
        // A create that Nova makes at once but answers late (a slow API, a lost answer).
        if (control.createAnswerDelayMs > 0) await new Promise((r) => setTimeout(r, control.createAnswerDelayMs));
        return send(res, 202, { server: { id, links: [], adminPass: 'x', security_groups: [{ name: 'default' }] } });
      }
      const id = decodeURIComponent(rest.slice(1));
      const s = servers.get(id);
      if (!s) return send(res, 404, { itemNotFound: { code: 404, message: `Instance ${id} could not be found.` } });
      if (req.method === 'GET') return send(res, 200, { server: view(s) });
      if (req.method === 'DELETE') {
        servers.delete(id);
        return send(res, 204);
      }
      return send(res, 405);
    } catch (err) {
      return send(res, 500, { computeFault: { code: 500, message: String(err) } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  onTeardown(close);
  return { authUrl: `${base}/v3`, servers, tokens, log, revoke: () => tokens.clear(), close, control };
}

export const FAKE_USER = USER;
