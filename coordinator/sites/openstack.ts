// The `openstack` site: drones are Nova servers, found and authorised through Keystone v3. The
// server's name is the drone id, so a server whose creation was cut short by a crash is found
// by name (GET /servers?name=^id$) and never created twice. The image's user data starts the
// worker (slurmd -Z with the drone's features); the adapter only creates, watches and deletes.
// Requests and answers follow the published Keystone v3 and Compute v2.1 API references; the
// tests run against a local server built from them (docs/COORDINATOR.md says what is covered).

import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { expandSecret } from '../../lib/secret-value.ts';
import type { openstackSiteSchema } from '../config.ts';
import { coordinatorErrors } from '../errors.ts';
import type { InstanceStatus } from '../model.ts';
import type { DroneSpec, InstanceData, SiteAdapter } from './types.ts';

type OpenstackConfig = z.infer<typeof openstackSiteSchema>;

/** Nova server status → TARDIS's resource status. */
export function novaStatus(status: string): Exclude<InstanceStatus, 'unknown'> {
  switch (status.toUpperCase()) {
    case 'ACTIVE':
      return 'running';
    case 'BUILD':
    case 'REBUILD':
    case 'REBOOT':
    case 'HARD_REBOOT':
    case 'MIGRATING':
    case 'RESIZE':
    case 'VERIFY_RESIZE':
      return 'booting';
    case 'ERROR':
    case 'UNKNOWN':
      return 'error';
    case 'DELETED':
    case 'SOFT_DELETED':
      return 'deleted';
    default: // SHUTOFF, STOPPED, SUSPENDED, PAUSED, SHELVED, SHELVED_OFFLOADED, RESCUE
      return 'stopped';
  }
}

interface Token {
  readonly value: string;
  readonly expiresAt: number;
  readonly compute: string;
}

/** A token is renewed this long before it expires, so no request carries a dying one. */
const TOKEN_MARGIN_MS = 60_000;

export class OpenstackSite implements SiteAdapter {
  readonly name: string;
  private readonly c: OpenstackConfig;
  private token: Promise<Token> | undefined;

  constructor(name: string, config: OpenstackConfig) {
    this.name = name;
    this.c = config;
  }

  private fail(op: string, reason: string): Error {
    return coordinatorErrors.siteFailed(this.name, op, reason);
  }

  private async authenticate(): Promise<Token> {
    const [password] = expandSecret(this.c.password, (path, reason) => this.fail('auth', `cannot read password file ${path}: ${reason}`));
    const body = {
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: this.c.username, domain: { name: this.c.userDomainName }, password } },
        },
        scope: { project: { name: this.c.projectName, domain: { name: this.c.projectDomainName } } },
      },
    };
    const url = `${this.c.authUrl.replace(/\/$/, '')}/auth/tokens`;
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.c.timeout),
    });
    if (res.status !== 201) throw this.fail('auth', `Keystone answered ${res.status} ${(await res.text()).slice(0, 200)}`);
    const value = res.headers.get('x-subject-token');
    const doc = (await res.json()) as {
      token: { expires_at: string; catalog?: { type: string; endpoints: { interface: string; region?: string; region_id?: string; url: string }[] }[] };
    };
    const compute = doc.token.catalog
      ?.find((s) => s.type === 'compute')
      ?.endpoints.find((e) => e.interface === 'public' && (!this.c.region || e.region_id === this.c.region || e.region === this.c.region));
    if (!value || !compute) throw this.fail('auth', 'Keystone gave no token or no public compute endpoint for this project/region');
    return { value, expiresAt: Date.parse(doc.token.expires_at), compute: compute.url.replace(/\/$/, '') };
  }

  private async currentToken(): Promise<Token> {
    const t = this.token ? await this.token.catch(() => undefined) : undefined;
    if (t && t.expiresAt - TOKEN_MARGIN_MS > Date.now()) return t;
    this.token = this.authenticate();
    return this.token;
  }

  /** One Compute request; a 401 renews the token once. */
  private async nova(op: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    for (let attempt = 0; ; attempt++) {
      const t = await this.currentToken();
      let res: Response;
      try {
        res = await fetch(`${t.compute}${path}`, {
          method,
          headers: { 'x-auth-token': t.value, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(this.c.timeout),
        });
      } catch (err) {
        // No answer: Nova may have created the server; the drone is kept as unknown and looked
        // up by name until it shows or the boot timeout passes.
        throw coordinatorErrors.siteUnanswered(this.name, op, (err as Error).message);
      }
      if (res.status === 401 && attempt === 0) {
        this.token = undefined;
        continue;
      }
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as unknown) : undefined };
    }
  }

  private async findByName(id: string): Promise<{ id: string; status: string } | undefined> {
    const r = await this.nova('status', 'GET', `/servers/detail?name=${encodeURIComponent(`^${id}$`)}`);
    if (r.status !== 200) throw this.fail('status', `Nova answered ${r.status}`);
    const servers = (r.json as { servers: { id: string; name: string; status: string }[] }).servers;
    // Nova's name filter is a regular expression; check the exact name anyway.
    return servers.find((s) => s.name === id);
  }

  async deploy(spec: DroneSpec): Promise<InstanceData> {
    const existing = await this.findByName(spec.id);
    if (existing) return { server: existing.id };
    const server: Record<string, unknown> = {
      name: spec.id,
      flavorRef: this.c.flavor,
      imageRef: this.c.image,
      metadata: { estuary_drone: spec.id, estuary_site: spec.site, estuary_type: spec.machineType },
      networks: this.c.network ? [{ uuid: this.c.network }] : 'auto',
    };
    if (this.c.keyName) server.key_name = this.c.keyName;
    if (this.c.userData) {
      let text: string;
      try {
        text = readFileSync(this.c.userData, 'utf8');
      } catch (err) {
        throw this.fail('deploy', `cannot read user data ${this.c.userData}: ${(err as Error).message}`);
      }
      const filled = text
        .replaceAll('{{id}}', spec.id)
        .replaceAll('{{features}}', spec.features.join(','))
        .replaceAll('{{cores}}', String(spec.cores))
        .replaceAll('{{memory_mb}}', String(spec.memoryMb));
      server.user_data = Buffer.from(filled).toString('base64');
    }
    const r = await this.nova('deploy', 'POST', '/servers', { server });
    if (r.status !== 202) throw this.fail('deploy', `Nova answered ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    return { server: (r.json as { server: { id: string } }).server.id };
  }

  async status(id: string, data: InstanceData): Promise<Exclude<InstanceStatus, 'unknown'>> {
    if (typeof data.server === 'string') {
      const r = await this.nova('status', 'GET', `/servers/${encodeURIComponent(data.server)}`);
      if (r.status === 404) return 'deleted';
      if (r.status !== 200) throw this.fail('status', `Nova answered ${r.status}`);
      return novaStatus((r.json as { server: { status: string } }).server.status);
    }
    const found = await this.findByName(id);
    return found ? novaStatus(found.status) : 'deleted';
  }

  async stop(id: string, data: InstanceData): Promise<void> {
    const server = typeof data.server === 'string' ? data.server : (await this.findByName(id))?.id;
    if (!server) return;
    const r = await this.nova('stop', 'DELETE', `/servers/${encodeURIComponent(server)}`);
    if (r.status !== 204 && r.status !== 404) throw this.fail('stop', `Nova answered ${r.status}`);
  }

  async list(prefix: string): Promise<string[]> {
    const r = await this.nova('list', 'GET', `/servers?name=${encodeURIComponent(`^${prefix}`)}`);
    if (r.status !== 200) throw this.fail('list', `Nova answered ${r.status}`);
    return (r.json as { servers: { name: string }[] }).servers.map((s) => s.name).filter((n) => n.startsWith(prefix));
  }
}
