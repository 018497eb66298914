// The subcommands that exist. Each entry loads its role lazily, so `estuary --help` and one role's
// start-up never pay for the other roles' imports.

import type { Command } from '../lib/command.ts';

export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

export const commands: readonly CommandEntry[] = [
  {
    name: 'gateway',
    summary: 'caching HTTP proxy for CVMFS and HTTP data (replaces Squid)',
    load: async () => (await import('../gateway/command.ts')).command,
  },
  {
    name: 'gateway credentials',
    summary: 'issue expiring S3 credentials scoped to buckets and prefixes, for the gateway S3 endpoint',
    load: async () => (await import('../gateway/credentials-command.ts')).command,
  },
  {
    name: 'agent',
    summary: 'heartbeat a cache to discovery over AMQP (Shoal-compatible)',
    load: async () => (await import('../agent/command.ts')).command,
  },
  {
    name: 'discovery',
    summary: 'consume cache heartbeats; tell worker nodes their nearest cache',
    load: async () => (await import('../discovery/command.ts')).command,
  },
  {
    name: 'discover',
    summary: 'worker-node client: find, test and apply the nearest caches (CVMFS_HTTP_PROXY, PAC)',
    load: async () => (await import('../discovery/client/command.ts')).command,
  },
  {
    name: 'coordinator',
    summary: 'burst the batch system (Slurm) into clouds with drones that join it',
    load: async () => (await import('../coordinator/command.ts')).command,
  },
  {
    name: 'bench',
    summary: 'measure estuary against s3fs, rclone, Squid, nginx, Varnish and friends',
    load: async () => (await import('../bench/command.ts')).command,
  },
  {
    name: 'stage',
    summary: 'copy a directory to or from an S3 prefix: resumable, verified, skips what is there',
    load: async () => (await import('../stage/command.ts')).command,
  },
  {
    name: 'mount',
    summary: 'mount an S3 bucket as a filesystem (FUSE)',
    load: async () => (await import('../fuse/command.ts')).command,
  },
  {
    name: 'umount',
    summary: 'unmount a bucket mounted with `estuary mount`',
    load: async () => (await import('../fuse/umount-command.ts')).command,
  },
];
