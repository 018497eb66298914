// Who may use the gateway and where it may go. Never an open proxy: destinations must be listed
// (or come from a named preset), clients must come from listed networks. Pure.

import { BlockList, isIP } from 'node:net';

/** Presets an operator can name in --allow-dest. Domains cover their subdomains. */
export const DEST_PRESETS: Readonly<Record<string, readonly string[]>> = {
  // Stratum 1s and Frontier servers of the WLCG/OSG CVMFS infrastructure, and CA CRL hosts.
  '@cvmfs': [
    '.cern.ch',
    '.fnal.gov',
    '.opensciencegrid.org',
    '.osgstorage.org',
    '.osg-htc.org',
    '.rl.ac.uk',
    '.bnl.gov',
    '.desy.de',
    '.kek.jp',
    '.ihep.ac.cn',
    '.triumf.ca',
    '.gridka.de',
    '.kit.edu',
    '.in2p3.fr',
    '.nikhef.nl',
  ],
  '@loopback': ['127.0.0.0/8', '::1', 'localhost'],
};

/** Private and loopback networks: the default client allow-list. */
export const DEFAULT_CLIENT_NETS = [
  '127.0.0.0/8',
  '::1/128',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  'fc00::/7',
  'fe80::/10',
];

export class ClientAcl {
  readonly #list = new BlockList();

  constructor(cidrs: readonly string[]) {
    for (const c of cidrs) {
      const [addr, bits] = c.split('/');
      const family = isIP(addr!) === 6 ? 'ipv6' : 'ipv4';
      this.#list.addSubnet(addr!, Number(bits ?? (family === 'ipv6' ? 128 : 32)), family);
    }
  }

  allows(address: string | undefined): boolean {
    if (!address) return false;
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(plain);
    if (family === 0) return false;
    return this.#list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  }
}

export interface DestRule {
  /** Exact host, or a domain suffix starting with '.', or '*' (anything: an explicit open proxy). */
  readonly host: string;
  readonly port?: number;
  /** The entry as configured (or the preset that brought it), for metric labels. */
  readonly label: string;
}

export class DestAcl {
  readonly #rules: DestRule[] = [];
  /** One list per configured entry (or preset) with networks, so a match can name its entry. */
  readonly #nets: { readonly label: string; readonly list: BlockList }[] = [];

  /** Entries: host, .domain, *.domain, host:port, CIDR, IP, or a preset name such as @cvmfs. */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const label = entry.trim().toLowerCase();
      let nets: BlockList | undefined;
      for (const raw of DEST_PRESETS[entry] ?? [entry]) {
        const e = raw.trim().toLowerCase();
        const [addr, bits] = e.split('/');
        const fam = isIP(addr!);
        if (fam !== 0) {
          nets ??= new BlockList();
          nets.addSubnet(addr!, Number(bits ?? (fam === 6 ? 128 : 32)), fam === 6 ? 'ipv6' : 'ipv4');
          continue;
        }
        const m = /^(\*\.|\.)?([^:]+|\*)(?::(\d+))?$/.exec(e);
        if (!m) continue;
        const host = m[1] ? `.${m[2]}` : m[2]!;
        this.#rules.push(m[3] ? { host, port: Number(m[3]), label } : { host, label });
      }
      if (nets) this.#nets.push({ label, list: nets });
    }
  }

  get empty(): boolean {
    return this.#rules.length === 0 && this.#nets.length === 0;
  }

  allows(hostname: string, port: number): boolean {
    return this.match(hostname, port) !== undefined;
  }

  /** The configured entry that allows this destination, or undefined. */
  match(hostname: string, port: number): string | undefined {
    const host = hostname
      .toLowerCase()
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '');
    const fam = isIP(host);
    if (fam !== 0) {
      const type = fam === 6 ? 'ipv6' : 'ipv4';
      for (const n of this.#nets) if (n.list.check(host, type)) return n.label;
    }
    return this.#rules.find((r) => {
      if (r.port !== undefined && r.port !== port) return false;
      if (r.host === '*') return true;
      if (r.host.startsWith('.')) return host === r.host.slice(1) || host.endsWith(r.host);
      return host === r.host;
    })?.label;
  }
}
