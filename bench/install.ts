// --install-peers: installs the Debian packages of missing peers with apt-get before measuring,
// and builds goofys from the Go module proxy (it is not packaged in Debian). Only what a scenario
// names is installed, and only when its command is not on PATH.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../lib/log.ts';
import { GOOFYS, GOOFYS_COMMIT, GOOFYS_SUMS, goofysGoMod } from './go-peer-build.ts';
import { lastLine, runCommand } from './proc.ts';

export interface PeerPackage {
  /** The command that must be on PATH. */
  readonly command: string;
  /** The Debian package providing it. */
  readonly pkg: string;
}

export async function onPath(command: string): Promise<boolean> {
  const r = await runCommand('sh', ['-c', `command -v ${command}`]);
  return r.code === 0;
}

/** Installs what is missing; returns one note per package that could not be installed. */
export async function installMissing(peers: readonly PeerPackage[], log: Logger): Promise<string[]> {
  const missing: PeerPackage[] = [];
  for (const p of peers) if (!(await onPath(p.command))) missing.push(p);
  if (missing.length === 0) return [];
  const pkgs = missing.map((p) => p.pkg);
  log.info({ pkgs }, 'installing missing peers from Debian');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    runCommand('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { env });
  let r = await install();
  if (r.code !== 0) {
    // A fresh machine has no package lists yet; update once and try again.
    await runCommand('apt-get', ['update', '-qq'], { env });
    r = await install();
  }
  if (r.code === 0) return [];
  return [`--install-peers could not install ${pkgs.join(', ')}: ${lastLine(r.output)}`];
}

/** Where built peers go: on root's PATH, beside what a site installs by hand. */
export const GO_PEER_DIR = '/usr/local/bin';
/** The Go toolchain of a machine that installed it from go.dev; Debian's golang-go is the fallback. */
const GO_TARBALL_BIN = '/usr/local/go/bin/go';
// Compiling goofys and its SDKs takes about a minute on 2 cores; downloading them is seconds.
const GO_BUILD_TIMEOUT_MS = 15 * 60_000;

async function findGo(log: Logger): Promise<string | undefined> {
  if ((await runCommand(GO_TARBALL_BIN, ['version'])).code === 0) return GO_TARBALL_BIN;
  if (await onPath('go')) return 'go';
  log.info('no Go toolchain: installing golang-go from Debian to build goofys');
  const missing = await installMissing([{ command: 'go', pkg: 'golang-go' }], log);
  return missing.length === 0 ? 'go' : undefined;
}

/**
 * Builds goofys into GO_PEER_DIR when it is not on PATH; returns one note when it could not.
 * The build runs in a fresh temporary module (bench/go-peer-build.ts says why) with the user's
 * GOPROXY, GOSUMDB=off (the checksum database may be unreachable where the proxy is not; the
 * pinned hashes of goofys's own modules still hold) and the local toolchain only.
 */
export async function installGoofys(log: Logger): Promise<string[]> {
  if (await onPath('goofys')) return [];
  const go = await findGo(log);
  if (!go) return ['--install-peers could not build goofys: no Go toolchain, and golang-go did not install'];
  const dir = await mkdtemp(join(tmpdir(), 'estuary-goofys-'));
  try {
    await writeFile(join(dir, 'go.mod'), goofysGoMod());
    await writeFile(join(dir, 'go.sum'), `${GOOFYS_SUMS.join('\n')}\n`);
    log.info({ module: `${GOOFYS.path}@${GOOFYS.version}`, into: GO_PEER_DIR }, 'building goofys from the Go module proxy');
    const env = { ...process.env, GOSUMDB: 'off', GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
    const out = join(GO_PEER_DIR, 'goofys');
    const r = await runCommand(
      go,
      ['build', '-ldflags', `-X main.Version=${GOOFYS_COMMIT}`, '-o', out, GOOFYS.path],
      { cwd: dir, env, timeoutMs: GO_BUILD_TIMEOUT_MS },
    );
    if (r.code === 0) return [];
    return [`--install-peers could not build goofys ${GOOFYS.version}: ${lastLine(r.output)}`];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
