// Reading /proc/mounts and running the system's unmount tools: shared by `estuary mount` (stale
// mounts, noticing an outside unmount) and `estuary umount`.

import { execFile } from 'node:child_process';
import { readFile, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/** /proc/mounts escapes space, tab, newline and backslash as octal. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

/** Symlinks followed in a row before giving up, as the kernel's ELOOP limit. */
const MAX_LINKS = 40;

/**
 * The path with every symlink resolved, as /proc/mounts names a mountpoint (cluster paths often
 * run through links: /home -> /export/home). realpath(3) fails on a dead FUSE mount (ENOTCONN)
 * and on a path that does not exist yet; then the parent is resolved and the last name appended
 * (followed, when it is itself a link).
 */
export async function canonicalPath(path: string, links = 0): Promise<string> {
  const abs = resolve(path);
  const real = await realpath(abs).catch(() => undefined);
  if (real !== undefined) return real;
  const parent = dirname(abs);
  if (parent === abs || links >= MAX_LINKS) return abs;
  const joined = join(await canonicalPath(parent, links + 1), basename(abs));
  const target = await readlink(joined).catch(() => undefined);
  return target === undefined ? joined : canonicalPath(resolve(dirname(joined), target), links + 1);
}

/**
 * The device (`major:minor`) of the topmost mount at `path`, from /proc/self/mountinfo, without a
 * request to that mount (a stat would leave its attributes cached, which a dead FUSE mount then
 * answers from as if alive). Undefined when nothing is mounted there or the table is unreadable.
 */
export async function mountDeviceAt(path: string): Promise<string | undefined> {
  const targets = await mountTargets(path);
  const table = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  let device: string | undefined;
  for (const line of table.split('\n')) {
    const fields = line.split(' ');
    if (targets.has(unescapeMountField(fields[4] ?? ''))) device = fields[2];
  }
  return device;
}

/** The names /proc/mounts may give `path` under: as given, and with every link resolved. */
async function mountTargets(path: string): Promise<Set<string>> {
  return new Set([resolve(path), await canonicalPath(path)]);
}

/** Whether the table (/proc/mounts) lists a mount at `path`. */
async function tableHas(table: string, path: string): Promise<boolean> {
  const targets = await mountTargets(path);
  return table.split('\n').some((line) => targets.has(unescapeMountField(line.split(' ')[1] ?? '')));
}

export async function isMounted(path: string): Promise<boolean> {
  return tableHas(await readFile('/proc/mounts', 'utf8').catch(() => ''), path);
}

function run(cmd: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  return new Promise((done) => {
    execFile(cmd, args, (err, stdout, stderr) => done({ ok: !err, output: `${stdout}${stderr}`.trim() }));
  });
}

/** fusermount -u (-uz when lazy), falling back to umount (-l) where fusermount is missing or refuses. */
export async function unmountPath(path: string, lazy: boolean): Promise<{ ok: boolean; output: string }> {
  const first = await run('fusermount', [lazy ? '-uz' : '-u', path]);
  if (first.ok) return first;
  const second = await run('umount', lazy ? ['-l', path] : [path]);
  return second.ok ? second : { ok: false, output: first.output || second.output };
}

export interface UnmountWatch {
  /** No `onGone` after this, not even from a check already under way. */
  stop(): void;
}

/**
 * Calls `onGone` once `path` is no longer mounted (someone ran fusermount -u or umount). Stop it
 * before unmounting on purpose: a check that read /proc/mounts just before would otherwise
 * report that unmount as an outside one (the mount then sent itself a second SIGTERM while
 * shutting down, and died of it).
 */
export function watchExternalUnmount(path: string, onGone: () => void, everyMs = 1000): UnmountWatch {
  let stopped = false;
  const timer = setInterval(() => {
    // A table that cannot be read (no free descriptor) says nothing: not "unmounted".
    void readFile('/proc/mounts', 'utf8').then(async (table) => {
      const mounted = await tableHas(table, path);
      if (!mounted && !stopped) {
        stopped = true;
        clearInterval(timer);
        onGone();
      }
    }, () => undefined);
  }, everyMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
