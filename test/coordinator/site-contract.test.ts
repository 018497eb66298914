// One contract, every site adapter: what the coordinator relies on when it deploys, watches,
// stops and lists instances — idempotence above all, since a restart repeats actions.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../coordinator/clock.ts';
import { commandSiteSchema, ec2SiteSchema, netnsSiteSchema, openstackSiteSchema } from '../../coordinator/config.ts';
import { ec2Status, Ec2Site } from '../../coordinator/sites/ec2.ts';
import { startMoto } from './helpers/moto.ts';
import { CommandSite } from '../../coordinator/sites/command.ts';
import { MemorySite } from '../../coordinator/sites/memory.ts';
import { NetnsSite } from '../../coordinator/sites/netns.ts';
import { novaStatus, OpenstackSite } from '../../coordinator/sites/openstack.ts';
import { unanswered } from '../../coordinator/errors.ts';
import { FAKE_USER, startFakeOpenstack } from './helpers/fake-openstack.ts';
import type { DroneSpec, SiteAdapter } from '../../coordinator/sites/types.ts';
import { onTeardown } from '../helpers/cleanup.ts';
import { killNamespace, namespacesWith, startSlurmCluster } from './helpers/slurm-cluster.ts';

const prefix = `c${process.pid}-`;
const spec = (n: number): DroneSpec => ({
  id: `${prefix}s-${n}`,
  site: 's',
  machineType: 'small',
  cores: 1,
  memoryMb: 500,
  features: ['estuary', 'site_s', 'type_small'],
});

async function until(site: SiteAdapter, id: string, want: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await site.status(id, {})) === want) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${id} never became ${want}`);
}

function siteContract(name: string, make: () => Promise<{ site: SiteAdapter; advance?: () => void }>) {
  describe(`site adapter contract: ${name}`, () => {
    it('deploys, reports, lists, stops; every step idempotent', async () => {
      const { site, advance } = await make();
      const a = spec(1);
      const data = await site.deploy(a);
      expect(typeof data).toBe('object');
      await site.deploy(a); // a retry after a crash must not make a second instance
      expect(await site.list(prefix)).toEqual([a.id]);
      advance?.();
      await until(site, a.id, 'running');
      await site.stop(a.id, data);
      await site.stop(a.id, data);
      expect(await site.status(a.id, data)).toBe('deleted');
      expect(await site.list(prefix)).toEqual([]);
    });
    it('knows nothing of ids it never started, and stopping them is harmless', async () => {
      const { site } = await make();
      expect(await site.status(`${prefix}s-404`, {})).toBe('deleted');
      await site.stop(`${prefix}s-404`, {});
      expect(await site.list('zz-nobody-')).toEqual([]);
    });
    it('runs several instances side by side', async () => {
      const { site, advance } = await make();
      const data = await Promise.all([1, 2, 3].map((n) => site.deploy(spec(10 + n))));
      // Instances deployed at once never share an address (where the site hands them out).
      const addresses = data.map((d) => d.address).filter((a) => a !== undefined);
      expect(new Set(addresses).size).toBe(addresses.length);
      advance?.();
      for (const n of [1, 2, 3]) await until(site, spec(10 + n).id, 'running');
      expect((await site.list(prefix)).sort()).toEqual([11, 12, 13].map((n) => spec(n).id).sort());
      await Promise.all([1, 2, 3].map((n) => site.stop(spec(10 + n).id, {})));
      expect(await site.list(prefix)).toEqual([]);
    });
  });
}

siteContract('memory', async () => {
  const clock = new VirtualClock();
  return { site: new MemorySite('s', clock, 1000), advance: () => clock.advance(1000) };
});

siteContract('command', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'estuary-cmd-site-'));
  // A toy cloud of files, the way an admin's scripts would wrap a real API.
  const config = commandSiteSchema.parse({
    start: `test -e ${dir}/$ESTUARY_DRONE_ID || echo running > ${dir}/$ESTUARY_DRONE_ID; echo instance_id=i-$ESTUARY_DRONE_ID`,
    stop: `rm -f ${dir}/$ESTUARY_DRONE_ID`,
    status: `cat ${dir}/$ESTUARY_DRONE_ID 2>/dev/null || echo deleted`,
    list: `ls ${dir}`,
  });
  return { site: new CommandSite('s', config) };
});

describe('command site errors', () => {
  it('a status command that prints nonsense or fails is a site error naming the site', async () => {
    const bad = new CommandSite('s', commandSiteSchema.parse({ start: 'true', stop: 'true', status: 'echo fine' }));
    await expect(bad.status('x', {})).rejects.toThrow(/site s: status failed: printed "fine"/);
    const failing = new CommandSite('s', commandSiteSchema.parse({ start: 'echo quota exceeded >&2; exit 3', stop: 'true', status: 'true' }));
    await expect(failing.deploy(spec(1))).rejects.toThrow(/site s: start failed: quota exceeded/);
    const slow = new CommandSite('s', commandSiteSchema.parse({ start: 'sleep 5', stop: 'true', status: 'true', timeout: '200ms' }));
    await expect(slow.deploy(spec(1))).rejects.toThrow(/no answer in 200 ms/);
  });
});

siteContract('openstack (local Keystone v3 + Nova)', async () => {
  const cloud = await startFakeOpenstack(150);
  const site = new OpenstackSite('s', openstackSiteSchema.parse({
    authUrl: cloud.authUrl,
    username: FAKE_USER.name,
    password: FAKE_USER.password,
    projectName: FAKE_USER.project,
    flavor: 'm1.small',
    image: 'drone-image',
  }));
  return { site };
});

describe('openstack site', () => {
  it('a create answered after the timeout is "no answer" (the server may exist), and is found by name', async () => {
    const cloud = await startFakeOpenstack(0);
    const site = new OpenstackSite('s', openstackSiteSchema.parse({
      authUrl: cloud.authUrl, username: FAKE_USER.name, password: FAKE_USER.password, projectName: FAKE_USER.project,
      flavor: 'm1.small', image: 'img-1', timeout: '300ms',
    }));
    cloud.control.createAnswerDelayMs = 1000;
    const err = await site.deploy(spec(1)).catch((e: unknown) => e);
    expect(unanswered(err)).toBe(true);
    expect(String(err)).toMatch(/deploy got no answer/);
    // What the coordinator asks each interval of an `unknown` drone: by name, no server id kept.
    expect(await site.status(spec(1).id, {})).toBe('running');
    cloud.control.createAnswerDelayMs = 0;
    expect(await site.deploy(spec(1))).toEqual({ server: [...cloud.servers.keys()][0] }); // never a second
    expect(cloud.servers.size).toBe(1);
    await site.stop(spec(1).id, {});
    await cloud.close();
  });

  it('sends the documented requests, fills in the user data, and renews a revoked token once', async () => {
    const cloud = await startFakeOpenstack(0);
    const dir = mkdtempSync(join(tmpdir(), 'estuary-os-'));
    writeFileSync(join(dir, 'user-data'), '#!/bin/sh\nslurmd -Z -N {{id}} --conf "CPUs={{cores}} RealMemory={{memory_mb}} Feature={{features}}"\n');
    const pwFile = join(dir, 'pw');
    writeFileSync(pwFile, `${FAKE_USER.password}\n`);
    const site = new OpenstackSite('s', openstackSiteSchema.parse({
      authUrl: cloud.authUrl, username: FAKE_USER.name, password: `@${pwFile}`, projectName: FAKE_USER.project,
      flavor: 'm1.small', image: 'img-1', network: 'net-1', userData: join(dir, 'user-data'),
    }));
    const data = await site.deploy(spec(1));
    const s = cloud.servers.get(String(data.server))!;
    expect(s.body).toMatchObject({ name: spec(1).id, flavorRef: 'm1.small', imageRef: 'img-1', networks: [{ uuid: 'net-1' }] });
    expect(Buffer.from(String(s.body.user_data), 'base64').toString()).toContain(`-N ${spec(1).id} --conf "CPUs=1 RealMemory=500 Feature=estuary,site_s,type_small"`);
    cloud.revoke();
    expect(await site.status(spec(1).id, data)).toBe('running');
    expect(cloud.log.filter((l) => l === 'POST /v3/auth/tokens')).toHaveLength(2);
    // A deploy repeated after a crash (no server id kept) finds the server by name.
    expect(await site.deploy(spec(1))).toEqual(data);
    expect(cloud.servers.size).toBe(1);
    await site.stop(spec(1).id, {});
    expect(cloud.servers.size).toBe(0);
  });

  it('a wrong password is a one-line site error', async () => {
    const cloud = await startFakeOpenstack(0);
    const site = new OpenstackSite('s', openstackSiteSchema.parse({
      authUrl: cloud.authUrl, username: FAKE_USER.name, password: 'wrong', projectName: FAKE_USER.project, flavor: 'f', image: 'i',
    }));
    await expect(site.list(prefix)).rejects.toThrow(/^site s: auth failed: Keystone answered 401/);
  });

  it('maps every Nova status', () => {
    expect(['ACTIVE', 'BUILD', 'ERROR', 'SHUTOFF', 'DELETED', 'SHELVED_OFFLOADED'].map(novaStatus)).toEqual([
      'running', 'booting', 'error', 'stopped', 'deleted', 'stopped',
    ]);
  });
});

// moto accepts any keys; the SDK's chain reads them from the environment, as on a real host.
process.env.AWS_ACCESS_KEY_ID ??= 'testing';
process.env.AWS_SECRET_ACCESS_KEY ??= 'testing';
const moto = await startMoto();
const ec2 = (extra: Record<string, unknown> = {}) =>
  new Ec2Site('s', ec2SiteSchema.parse({ region: 'us-east-1', endpoint: moto, imageId: 'ami-12c6146b', instanceType: 't3.micro', ...extra }));

if (moto) siteContract('ec2 (moto server)', async () => ({ site: ec2() }));

describe.runIf(moto !== undefined)('ec2 site', () => {
  it('tags instances with their drone, finds them again after a crash, and asks for spot when told to', async () => {
    const site = ec2({ spot: true, maxPrice: '0.05' });
    const a = spec(21);
    const data = await site.deploy(a);
    expect(String(data.instance)).toMatch(/^i-/);
    // A deploy repeated with no instance id kept finds the same instance by its tag.
    expect(await site.deploy(a)).toEqual(data);
    expect(await site.status(a.id, {})).toBe('running');
    await site.stop(a.id, {});
    expect(await site.status(a.id, data)).toBe('deleted');
  });

  it('reports a spot instance EC2 reclaims as stopped, so its drone drains', () => {
    expect(ec2Status({ State: { Name: 'running' }, StateReason: { Code: 'Server.SpotInstanceTermination' } })).toBe('stopped');
    expect(['pending', 'running', 'stopping', 'shutting-down', 'terminated'].map((n) => ec2Status({ State: { Name: n as never } }))).toEqual([
      'booting', 'running', 'stopped', 'stopped', 'deleted',
    ]);
  });
});

let netns: NetnsSite | undefined;
siteContract('netns', async () => {
  if (netns) return { site: netns };
  const cluster = await startSlurmCluster({ homeNodes: 0, droneFeatures: spec(1).features, droneCpus: 1 });
  // Whatever a failed test left, before the cluster goes (teardowns run in reverse).
  onTeardown(async () => {
    for (const ns of namespacesWith(prefix)) await killNamespace(ns);
  });
  netns = new NetnsSite(
    's',
    netnsSiteSchema.parse({
      bridge: cluster.bridge,
      subnet: cluster.subnet,
      gateway: cluster.gateway,
      slurmConf: cluster.conf,
      runDir: `${cluster.dir}/drones`,
      bandwidth: '100mbit',
    }),
  );
  return { site: netns };
});

describe('netns site', () => {
  it('leaves no namespace behind after the contract', () => {
    expect(namespacesWith(prefix)).toEqual([]);
  });
});
