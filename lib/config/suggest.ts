// "Did you mean": the known name closest to a misspelt one, for config errors that name the
// unknown key. Pure.

/** Edit distance (insertions, deletions, substitutions, and a swap of two neighbours). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  return d[a.length]![b.length]!;
}

/**
 * The known name closest to `name`, when it is close enough to be a slip of the keyboard: at
 * most 2 edits, and fewer than a third of the name (so "id" does not suggest "ip").
 */
export function closest(name: string, known: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const dist = editDistance(norm(name), norm(k));
    if (dist < bestD) {
      best = k;
      bestD = dist;
    }
  }
  return best !== undefined && bestD <= Math.min(2, Math.ceil(name.length / 3)) ? best : undefined;
}

/** ` (did you mean "x"?)`, or nothing. */
export function didYouMean(name: string, known: readonly string[]): string {
  const c = closest(name, known);
  return c ? ` (did you mean "${c}"?)` : '';
}
