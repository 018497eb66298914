// One `estuary bench fuse` run: its settings, the samples it records, the peers' statuses and the
// mountpoint and download directory every copy uses.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Backend } from '../backends/backend.ts';
import type { NetworkProfile } from '../network-profile.ts';
import { SampleBook } from '../samples.ts';
import type { BenchContext, PeerStatus } from '../scenario.ts';
import type { Dataset, MetadataSizes } from './datasets.ts';
import type { Mounted, MountPeer } from './mounts.ts';

export interface FuseSettings {
  readonly network: NetworkProfile;
  readonly backend: 's3rver' | 'swift';
  readonly endpoint?: string;
  readonly bucket: string;
  readonly runs: number;
  readonly datasets: readonly Dataset[];
  /** Undefined when --cases leaves the metadata suite out. */
  readonly metadata: MetadataSizes | undefined;
  readonly peers?: readonly string[];
}


export function slug(d: Dataset): string {
  return d.label.replace('×', 'x');
}

export class Run {
  readonly book: SampleBook;
  readonly statuses = new Map<string, PeerStatus>();
  readonly notes: string[] = [];
  readonly mnt: string;
  readonly down: string;
  step = 0;
  totalSteps = 0;
  cachesDropped = true;
  readonly ctx: BenchContext;
  readonly s: FuseSettings;
  readonly backend: Backend;
  readonly s3: S3Client;
  constructor(ctx: BenchContext, s: FuseSettings, backend: Backend, s3: S3Client) {
    this.ctx = ctx;
    this.s = s;
    this.backend = backend;
    this.s3 = s3;
    this.book = new SampleBook(ctx);
    this.mnt = join(ctx.workDir, 'mnt');
    this.down = join(ctx.workDir, 'down');
  }

  alive(peer: string): boolean {
    return this.statuses.get(peer)?.status === 'ok' && !this.ctx.signal.aborted;
  }

  fail(peer: string, what: string, err: unknown): void {
    // An interrupted step is not the peer's failure: the run notes the interruption instead.
    if (this.ctx.signal.aborted) return;
    const reason = `${what}: ${(err as Error).message.split('\n')[0]}`;
    const prev = this.statuses.get(peer);
    this.statuses.set(peer, { peer, status: 'failed', reason, version: prev?.version });
    this.ctx.log.warn({ peer, reason }, 'peer failed; its column is marked failed');
  }

  progress(text: string): void {
    this.step++;
    this.ctx.progress(`(${this.step}/${this.totalSteps}) ${text}`);
  }

  async mount(peer: MountPeer): Promise<Mounted> {
    await mkdir(this.mnt, { recursive: true });
    return await peer.mount({
      bucket: this.s.bucket,
      mountpoint: this.mnt,
      backend: this.backend,
      configDir: this.ctx.workDir,
    });
  }
}
