// A pending job array, as squeue prints it: one record for all its pending tasks, with the
// indices left in `array_task_string` ("1-4", "1,3,5-9", "1-9:2", "1-1000%10"). Each pending
// task is a job a drone could run, so each is counted — up to the `%` throttle, less the
// array's tasks already running (Slurm starts no more than that at once). Pure text in, numbers
// out: tested without a cluster.

export interface ArrayTasks {
  /** The pending task indices, in order (at most `limit` of them are produced). */
  readonly indices: number[];
  /** Every pending task, counted without expanding. */
  readonly count: number;
  /** The `%N` throttle: at most N tasks of the array run at once (undefined: none). */
  readonly throttle?: number;
}

/** A range item: `7`, `1-4`, `1-9:2`. Returns undefined when it is not one. */
function range(item: string): { from: number; to: number; step: number } | undefined {
  const m = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/.exec(item.trim());
  if (!m) return undefined;
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  const step = m[3] === undefined ? 1 : Number(m[3]);
  if (to < from || step < 1) return undefined;
  return { from, to, step };
}

/**
 * Parses an array task string; `limit` caps how many indices are listed (a 1,000,000-task array
 * need not be expanded to be counted). Undefined when the text is not an array task string.
 */
export function parseArrayTasks(text: string | null | undefined, limit = Infinity): ArrayTasks | undefined {
  if (!text) return undefined;
  const [whole, throttleText] = text.split('%');
  const list = uncut(whole ?? '');
  const throttle = throttleText === undefined ? undefined : Number(throttleText);
  if (throttle !== undefined && !(Number.isInteger(throttle) && throttle >= 0)) return undefined;
  const indices: number[] = [];
  let count = 0;
  for (const item of (list ?? '').split(',')) {
    const r = range(item);
    if (!r) return undefined;
    const n = Math.floor((r.to - r.from) / r.step) + 1;
    for (let i = 0; i < n && indices.length < limit; i++) indices.push(r.from + i * r.step);
    count += n;
  }
  return { indices, count, ...(throttle !== undefined && throttle > 0 ? { throttle } : {}) };
}

/**
 * squeue cuts a long list with "..." (SLURM_BITSTR_LEN, 64 characters by default; the adapter
 * asks for the whole list, this is the fallback). The items before the cut are counted — at
 * least those tasks wait — and an item the cut may have split ("…,6...") is left out.
 */
function uncut(list: string): string {
  if (!list.endsWith('...')) return list;
  const before = list.slice(0, -3);
  if (before.endsWith(',')) return before.slice(0, -1);
  return before.slice(0, Math.max(0, before.lastIndexOf(',')));
}

/** Tasks that could start now: all pending, or the throttle less the running ones. */
export function runnableTasks(tasks: ArrayTasks, running: number): number {
  if (tasks.throttle === undefined) return tasks.count;
  return Math.max(0, Math.min(tasks.count, tasks.throttle - running));
}
