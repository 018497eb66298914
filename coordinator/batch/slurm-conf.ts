// The few slurm.conf settings the coordinator reads itself: where the job completion log is
// (JobCompType, JobCompLoc). Slurm's client commands read the same file (SLURM_CONF, else the
// default path), so the coordinator looks where sacct would. Keys are case-insensitive, the last
// one wins, `#` starts a comment, and `Include FILE` lines are followed (relative to the file's
// directory), as slurmctld reads them.

import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';

/** Where Slurm 22.05's client commands look when SLURM_CONF is not set (Debian's slurm-wlm). */
export const DEFAULT_SLURM_CONF = '/etc/slurm/slurm.conf';

/** Where jobcomp/filetxt writes when slurm.conf names no JobCompLoc (jobcomp_filetxt.c). */
export const DEFAULT_JOBCOMP_LOC = '/var/log/slurm_jobcomp.log';

/** Include depth followed: slurm.conf files include one or two levels; a loop stops here. */
const MAX_INCLUDE_DEPTH = 8;

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

/** The settings of a slurm.conf and the files it includes; throws when the file cannot be read. */
export async function readSlurmConf(file: string, depth = 0): Promise<Map<string, string>> {
  const { settings, includes } = parseSlurmConf(await readFile(file, 'utf8'));
  if (depth >= MAX_INCLUDE_DEPTH) return settings;
  for (const inc of includes) {
    const path = isAbsolute(inc) ? inc : join(dirname(file), inc);
    const more = await readSlurmConf(path, depth + 1).catch(() => new Map<string, string>());
    for (const [k, v] of more) settings.set(k, v);
  }
  return settings;
}
