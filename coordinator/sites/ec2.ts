// The `ec2` site: drones are EC2 instances, on-demand or spot. The only file of the coordinator
// that talks to EC2 (the AWS SDK). Each instance is tagged with its drone id, and RunInstances
// carries the id as its ClientToken, so a deploy repeated after a crash finds or returns the same
// instance instead of starting a second one. The image's user data starts the worker (slurmd -Z
// with the drone's features); the adapter creates, watches and terminates. A spot instance that
// EC2 reclaims (state reason Server.SpotInstanceTermination, or shutting down on its own) is
// reported stopped, and the coordinator replaces the drone. Two minutes before, EC2 marks the
// spot request (status marked-for-termination, -stop or -hibernation): that is reported as
// "interrupting", and the drone drains while it still can.
//
// The SDK is an optional package (a worker-node install leaves it out): it is loaded when the first
// ec2 site is built, and the coordinator loads it at start (loadEc2Sdk) so that a missing package
// ends it at once with one line, not with a site that fails every interval.

import { readFileSync } from 'node:fs';
import type { EC2Client, Filter, Instance } from '@aws-sdk/client-ec2';
import type { z } from 'zod';
import { optionalPackage } from '../../lib/optional-package.ts';
import type { ec2SiteSchema } from '../config.ts';
import { coordinatorErrors } from '../errors.ts';
import type { InstanceStatus } from '../model.ts';
import type { DroneSpec, InstanceData, SiteAdapter } from './types.ts';

type Ec2Config = z.infer<typeof ec2SiteSchema>;

/** The tag holding the drone id (also the instance's Name, for the console). */
const DRONE_TAG = 'estuary-drone';
/** Instances in these states still exist, as far as the coordinator is concerned. */
const LIVE_STATES = ['pending', 'running', 'stopping', 'stopped', 'shutting-down'];

/** EC2 instance state (and why it changed) → TARDIS's resource status. */
export function ec2Status(i: Pick<Instance, 'State' | 'StateReason'>): Exclude<InstanceStatus, 'unknown'> {
  const reclaimed = i.StateReason?.Code === 'Server.SpotInstanceTermination';
  switch (i.State?.Name) {
    case 'pending':
      return 'booting';
    case 'running':
      return reclaimed ? 'stopped' : 'running';
    case 'terminated':
      return 'deleted';
    default: // stopping, stopped, shutting-down
      return 'stopped';
  }
}

/** Spot request status codes of EC2's two-minute interruption notice (the Spot request status reference). */
const NOTICE_CODES = new Set(['marked-for-termination', 'marked-for-stop', 'marked-for-hibernation']);

/** A running spot instance whose request carries an interruption notice is interrupting. */
export function spotNotice(code: string | undefined): boolean {
  return code !== undefined && NOTICE_CODES.has(code);
}

type Ec2Sdk = typeof import('@aws-sdk/client-ec2');

/** The EC2 SDK, or the one-line error (exit 2) of an install without it. */
export function loadEc2Sdk(): Promise<Ec2Sdk> {
  return optionalPackage('@aws-sdk/client-ec2', { feature: "the coordinator's ec2 site adapter" }, () => import('@aws-sdk/client-ec2'));
}

export class Ec2Site implements SiteAdapter {
  readonly name: string;
  private readonly c: Ec2Config;
  private api?: Promise<{ sdk: Ec2Sdk; ec2: EC2Client }>;

  constructor(name: string, config: Ec2Config) {
    this.name = name;
    this.c = config;
  }

  /** The SDK and a client, made on first use. */
  private client(): Promise<{ sdk: Ec2Sdk; ec2: EC2Client }> {
    this.api ??= loadEc2Sdk().then((sdk) => ({
      sdk,
      // Keys come from the SDK's chain: AWS_* variables, AWS_PROFILE, the instance role.
      ec2: new sdk.EC2Client({ region: this.c.region, endpoint: this.c.endpoint, maxAttempts: 3 }),
    }));
    return this.api;
  }

  private fail(op: string, err: unknown): Error {
    const message = (err as Error).message ?? String(err);
    // An error with an HTTP status is EC2's own refusal; anything else (timeout, a connection
    // lost) leaves open whether RunInstances went through. Its ClientToken makes asking again
    // safe, and the drone is kept as unknown until EC2 shows the instance or the boot timeout.
    const answered = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== undefined;
    return answered ? coordinatorErrors.siteFailed(this.name, op, message) : coordinatorErrors.siteUnanswered(this.name, op, message);
  }

  private async describe(op: string, filters: Filter[], ids?: string[]): Promise<Instance[]> {
    const out: Instance[] = [];
    let token: string | undefined;
    const { sdk, ec2 } = await this.client();
    try {
      do {
        const r = await ec2.send(
          new sdk.DescribeInstancesCommand({ Filters: filters, InstanceIds: ids, NextToken: token }),
          { abortSignal: AbortSignal.timeout(this.c.timeout) },
        );
        for (const res of r.Reservations ?? []) out.push(...(res.Instances ?? []));
        token = r.NextToken;
      } while (token);
    } catch (err) {
      if ((err as { name?: string }).name === 'InvalidInstanceID.NotFound') return [];
      throw this.fail(op, err);
    }
    return out;
  }

  private async byDrone(op: string, id: string): Promise<Instance | undefined> {
    const found = await this.describe(op, [
      { Name: `tag:${DRONE_TAG}`, Values: [id] },
      { Name: 'instance-state-name', Values: LIVE_STATES },
    ]);
    return found[0];
  }

  private userData(spec: DroneSpec): string | undefined {
    if (!this.c.userData) return undefined;
    let text: string;
    try {
      text = readFileSync(this.c.userData, 'utf8');
    } catch (err) {
      throw this.fail('deploy', new Error(`cannot read user data ${this.c.userData}: ${(err as Error).message}`));
    }
    const filled = text
      .replaceAll('{{id}}', spec.id)
      .replaceAll('{{features}}', spec.features.join(','))
      .replaceAll('{{cores}}', String(spec.cores))
      .replaceAll('{{memory_mb}}', String(spec.memoryMb));
    return Buffer.from(filled).toString('base64');
  }

  async deploy(spec: DroneSpec): Promise<InstanceData> {
    const existing = await this.byDrone('deploy', spec.id);
    if (existing?.InstanceId) return { instance: existing.InstanceId };
    const tags = [
      { Key: 'Name', Value: spec.id },
      { Key: DRONE_TAG, Value: spec.id },
      { Key: 'estuary-site', Value: spec.site },
      { Key: 'estuary-type', Value: spec.machineType },
    ];
    const { sdk, ec2 } = await this.client();
    try {
      const r = await ec2.send(
        new sdk.RunInstancesCommand({
          ClientToken: spec.id,
          ImageId: this.c.imageId,
          InstanceType: this.c.instanceType as never,
          MinCount: 1,
          MaxCount: 1,
          KeyName: this.c.keyName,
          SubnetId: this.c.subnetId,
          SecurityGroupIds: this.c.securityGroupIds,
          UserData: this.userData(spec),
          TagSpecifications: [{ ResourceType: 'instance', Tags: tags }],
          // The policy's market when it chose one (estuary buys both), else the site's setting.
          InstanceMarketOptions: (spec.market ? spec.market === 'spot' : this.c.spot)
            ? { MarketType: 'spot', SpotOptions: { SpotInstanceType: 'one-time', MaxPrice: this.c.maxPrice } }
            : undefined,
        }),
        { abortSignal: AbortSignal.timeout(this.c.timeout) },
      );
      const id = r.Instances?.[0]?.InstanceId;
      if (!id) throw new Error('RunInstances returned no instance');
      return { instance: id };
    } catch (err) {
      throw this.fail('deploy', err);
    }
  }

  async status(id: string, data: InstanceData): Promise<Exclude<InstanceStatus, 'unknown'>> {
    const found =
      typeof data.instance === 'string'
        ? (await this.describe('status', [], [data.instance]))[0]
        : await this.byDrone('status', id);
    if (!found) return 'deleted';
    const status = ec2Status(found);
    if (status !== 'running' || !found.SpotInstanceRequestId) return status;
    return (await this.spotCode(found.SpotInstanceRequestId)) ? 'interrupting' : 'running';
  }

  /** True when EC2 has announced it takes this spot request's instance back. */
  private async spotCode(request: string): Promise<boolean> {
    const { sdk, ec2 } = await this.client();
    try {
      const r = await ec2.send(new sdk.DescribeSpotInstanceRequestsCommand({ SpotInstanceRequestIds: [request] }), {
        abortSignal: AbortSignal.timeout(this.c.timeout),
      });
      return spotNotice(r.SpotInstanceRequests?.[0]?.Status?.Code);
    } catch (err) {
      // A request EC2 no longer knows says nothing about the instance, which is running.
      if ((err as { name?: string }).name === 'InvalidSpotInstanceRequestID.NotFound') return false;
      throw this.fail('status', err);
    }
  }

  async stop(id: string, data: InstanceData): Promise<void> {
    const instance = typeof data.instance === 'string' ? data.instance : (await this.byDrone('stop', id))?.InstanceId;
    if (!instance) return;
    const { sdk, ec2 } = await this.client();
    try {
      await ec2.send(new sdk.TerminateInstancesCommand({ InstanceIds: [instance] }), {
        abortSignal: AbortSignal.timeout(this.c.timeout),
      });
    } catch (err) {
      if ((err as { name?: string }).name === 'InvalidInstanceID.NotFound') return;
      throw this.fail('stop', err);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const found = await this.describe('list', [
      { Name: 'tag-key', Values: [DRONE_TAG] },
      { Name: 'instance-state-name', Values: LIVE_STATES },
    ]);
    const ids = found.map((i) => i.Tags?.find((t) => t.Key === DRONE_TAG)?.Value ?? '');
    return [...new Set(ids.filter((n) => n.startsWith(prefix)))];
  }

  async close(): Promise<void> {
    await this.api?.then(
      ({ ec2 }) => ec2.destroy(),
      () => undefined,
    );
  }
}
