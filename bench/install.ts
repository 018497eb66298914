// --install-peers: installs the Debian packages of missing peers with apt-get before measuring.
// Only packages a scenario names are installed, and only when their command is not on PATH.

import type { Logger } from '../lib/log.ts';
import { lastLine, runCommand } from './proc.ts';

export interface PeerPackage {
  /** The command that must be on PATH. */
  readonly command: string;
  /** The Debian package providing it. */
  readonly pkg: string;
}

async function onPath(command: string): Promise<boolean> {
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
