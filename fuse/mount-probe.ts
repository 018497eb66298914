// Gathers the facts mount-diagnosis.ts judges: who this process is, what /dev/fuse allows, what
// the mountpoint holds, /etc/fuse.conf and fusermount. Every read that fails counts as "no",
// except where "no" would name a cause that is not there (an unreadable mountpoint is not called
// non-empty).

import { constants } from 'node:fs';
import { access, readdir, readFile, stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import type { DeviceFacts, MountFacts } from './mount-diagnosis.ts';

const DEVICE = '/dev/fuse';
const FUSE_CONF = '/etc/fuse.conf';

const canAccess = (path: string, mode: number) =>
  access(path, mode).then(
    () => true,
    () => false,
  );

/** Names of ids from /etc/passwd or /etc/group; the number itself when there is none. */
async function idNames(file: string): Promise<Map<number, string>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const names = new Map<number, string>();
  for (const line of text.split('\n')) {
    const [name, , id] = line.split(':');
    if (name && id && /^\d+$/.test(id) && !names.has(Number(id))) names.set(Number(id), name);
  }
  return names;
}

async function device(): Promise<DeviceFacts> {
  const st = await stat(DEVICE).catch(() => undefined);
  if (!st) return { exists: false, usable: false, mode: 0, owner: '', group: '', gid: 0 };
  const [users, groups] = await Promise.all([idNames('/etc/passwd'), idNames('/etc/group')]);
  return {
    exists: true,
    usable: await canAccess(DEVICE, constants.R_OK | constants.W_OK),
    mode: st.mode & 0o777,
    owner: users.get(st.uid) ?? String(st.uid),
    group: groups.get(st.gid) ?? String(st.gid),
    gid: st.gid,
  };
}

async function userAllowOther(): Promise<boolean> {
  const text = await readFile(FUSE_CONF, 'utf8').catch(() => '');
  return text.split('\n').some((line) => line.trim() === 'user_allow_other');
}

async function setuidFusermount(): Promise<boolean> {
  // libfuse 2 runs fusermount from its build-time directory, else from PATH.
  const dirs = ['/usr/bin', '/bin', ...(process.env.PATH ?? '').split(delimiter).filter(Boolean)];
  for (const dir of dirs) {
    const st = await stat(join(dir, 'fusermount')).catch(() => undefined);
    if (st && st.uid === 0 && (st.mode & 0o4000) !== 0) return true;
  }
  return false;
}

function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return '';
  }
}

export async function probeMount(
  mountpoint: string,
  options: { allowOther: boolean; allowNonEmpty: boolean },
): Promise<MountFacts> {
  const path = resolve(mountpoint);
  const entries = await readdir(path).catch(() => [] as string[]);
  return {
    uid: process.getuid?.() ?? 0,
    user: userName(),
    groups: process.getgroups?.() ?? [],
    device: await device(),
    mountpoint,
    entries: entries.sort(),
    writable: await canAccess(path, constants.W_OK),
    allowOther: options.allowOther,
    allowNonEmpty: options.allowNonEmpty,
    userAllowOther: await userAllowOther(),
    fusermount: await setuidFusermount(),
  };
}
