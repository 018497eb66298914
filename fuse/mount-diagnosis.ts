// Why a FUSE mount would fail, named from facts about this process, /dev/fuse and the mountpoint.
// libfuse answers every failure with the same "fuse failed" and prints its own reason on stderr,
// so the mount gathers the facts itself (mount-probe.ts) and this file, which does no I/O, turns
// them into the one cause that applies and what to do about it. Each rule mirrors a check that
// libfuse 2 or fusermount makes, so a cause named here is one the mount would really hit.

import type { EstuaryError } from '../lib/errors.ts';
import { fsErrors } from './errors.ts';

export interface DeviceFacts {
  readonly exists: boolean;
  /** This process may open it for reading and writing (access(2), so ACLs count). */
  readonly usable: boolean;
  readonly mode: number;
  readonly owner: string;
  readonly group: string;
  readonly gid: number;
}

export interface MountFacts {
  readonly uid: number;
  /** The user's name, or '' when the uid has none. */
  readonly user: string;
  readonly groups: readonly number[];
  readonly device: DeviceFacts;
  readonly mountpoint: string;
  /** A few names found in the mountpoint; empty when it is empty or cannot be listed. */
  readonly entries: readonly string[];
  readonly writable: boolean;
  readonly allowOther: boolean;
  readonly allowNonEmpty: boolean;
  /** /etc/fuse.conf has an uncommented user_allow_other line. */
  readonly userAllowOther: boolean;
  /** A set-uid-root fusermount was found on PATH (mounts by other users go through it). */
  readonly fusermount: boolean;
}

/** `crw-rw-rw-`, as ls shows a character device. */
export function modeString(mode: number): string {
  const bits = 'rwxrwxrwx';
  let out = 'c';
  for (let i = 0; i < 9; i++) out += mode & (1 << (8 - i)) ? bits[i] : '-';
  return out;
}

function deviceCause(f: MountFacts): EstuaryError {
  const d = f.device;
  const who = `uid ${f.uid}${f.user ? ` (${f.user})` : ''}`;
  const shown = `/dev/fuse (${modeString(d.mode)} ${d.owner}:${d.group})`;
  // A group that may read and write the device, which this user is not in: the classic `fuse` group.
  if (d.gid !== 0 && (d.mode & 0o060) === 0o060 && !f.groups.includes(d.gid)) {
    return fsErrors.fuseGroup(shown, who, d.group, f.user || 'USER');
  }
  return fsErrors.fusePermission(shown, who);
}

/** The first reason the mount cannot succeed, or undefined when none of the known ones applies. */
export function diagnoseMount(f: MountFacts): EstuaryError | undefined {
  // libfuse 2 refuses a non-empty mountpoint, for root too, unless given `nonempty`.
  if (f.entries.length > 0 && !f.allowNonEmpty) {
    const shown = f.entries.slice(0, 3).join(', ') + (f.entries.length > 3 ? ', …' : '');
    return fsErrors.notEmpty(f.mountpoint, shown);
  }
  if (!f.device.exists) return fsErrors.noFuseDevice();
  // Root may open any device and pass any option; the rest are fusermount's rules for users.
  if (f.uid === 0) return undefined;
  if (!f.device.usable) return deviceCause(f);
  if (f.allowOther && !f.userAllowOther) return fsErrors.allowOther();
  if (!f.writable) return fsErrors.notWritable(f.mountpoint, String(f.uid));
  if (!f.fusermount) return fsErrors.noFusermount();
  return undefined;
}
