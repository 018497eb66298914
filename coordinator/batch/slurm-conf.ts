// The few slurm.conf settings the coordinator reads itself: where the job completion log is
// (JobCompType, JobCompLoc). Slurm's client commands read the same file (SLURM_CONF, else the
// default path), so the coordinator looks where sacct would. Keys are case-insensitive, the last
// one wins, `#` starts a comment, and `Include FILE` lines are followed (relative to the file's
// directory), as slurmctld reads them.

import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';

/** Where Slurm 22.05's client commands look when SLURM_CONF is not set (Debian's slurm-wlm). */
export const DEFAULT_SLURM_CONF = '/etc/slurm/slurm.conf';

/** Where jobcomp/filetxt writes when slurm.conf names no JobCompLoc (jobcomp_filetxt.c). */
export const DEFAULT_JOBCOMP_LOC = '/var/log/slurm_jobcomp.log';

/** Include depth followed: slurm.conf files include one or two levels. */
const MAX_INCLUDE_DEPTH = 8;

/** A slurm.conf is a few KiB; a larger file is not one (a log, a device) and is not read. */
const MAX_CONF_BYTES = 1024 * 1024;

/** The settings of one slurm.conf text, keys lowercased; Include lines listed in order. */
export function parseSlurmConf(text: string): { settings: Map<string, string>; includes: string[] } {
  const settings = new Map<string, string>();
  const includes: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    const include = /^include\s+(.+)$/i.exec(line);
    if (include) includes.push(include[1]!.trim());
    else
      for (const m of line.matchAll(/(\w+)=("[^"]*"|\S*)/g)) settings.set(m[1]!.toLowerCase(), m[2]!.replace(/^"(.*)"$/, '$1'));
  }
  return { settings, includes };
}

/**
 * The settings of a slurm.conf and the files it includes; throws when the file itself cannot be
 * read. Each file is read once however often it is included (a loop or a fan-out of Include lines
 * ends there), and only regular files of at most 1 MiB are read: an Include of a FIFO, a device or
 * a huge file, like one of a missing file, adds nothing.
 */
export async function readSlurmConf(file: string): Promise<Map<string, string>> {
  return await readIncluding(file, 0, new Set());
}

async function readIncluding(file: string, depth: number, seen: Set<string>): Promise<Map<string, string>> {
  const { settings, includes } = parseSlurmConf(await readRegular(file, seen));
  if (depth >= MAX_INCLUDE_DEPTH) return settings;
  for (const inc of includes) {
    const path = isAbsolute(inc) ? inc : join(dirname(file), inc);
    const more = await readIncluding(path, depth + 1, seen).catch(() => new Map<string, string>());
    for (const [k, v] of more) settings.set(k, v);
  }
  return settings;
}

/** The text of `file` if it is a regular file of at most 1 MiB not read before; throws otherwise. */
async function readRegular(file: string, seen: Set<string>): Promise<string> {
  // Non-blocking, so that opening a FIFO no one writes returns at once instead of waiting for ever.
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    if (st.size > MAX_CONF_BYTES) throw new Error(`${file} is larger than 1 MiB`);
    const id = `${st.dev}:${st.ino}`;
    if (seen.has(id)) return '';
    seen.add(id);
    const buf = Buffer.alloc(st.size);
    const { bytesRead } = await fh.read(buf, 0, st.size, 0);
    return buf.toString('utf8', 0, bytesRead);
  } finally {
    await fh.close();
  }
}
