// Which addresses to advertise: Shoal's rule, one public and one private IPv4 address from the
// host's interfaces, loopback ignored. Pure over os.networkInterfaces()' shape; options override.

import type { NetworkInterfaceInfo } from 'node:os';

const PRIVATE_V4 = /^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/;

export function pickAddresses(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>): {
  publicIp?: string;
  privateIp?: string;
} {
  let publicIp: string | undefined;
  let privateIp: string | undefined;
  for (const infos of Object.values(interfaces)) {
    for (const i of infos ?? []) {
      if (i.family !== 'IPv4' || i.internal) continue;
      if (PRIVATE_V4.test(i.address)) privateIp ??= i.address;
      else if (!i.address.startsWith('169.254.')) publicIp ??= i.address;
    }
  }
  return { publicIp, privateIp };
}
