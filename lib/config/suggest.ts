// "did you mean --allow-dest?" for a mistyped flag. Pure. A candidate is close when it is within
// two edits (insert, delete, replace, or swapping two neighbours: Damerau's optimal string
// alignment), one for names of four letters or fewer, where two edits reach almost anything; or
// when one name is the start of the other (--allow for --allow-dest, --allow-destination too).

/** Edits between a and b, counting a swap of two adjacent letters as one. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** Up to three known names close to `given`, nearest first; names without their dashes. */
export function closeNames(given: string, known: readonly string[]): string[] {
  const limit = given.length <= 4 ? 1 : 2;
  const scored: { name: string; score: number }[] = [];
  for (const name of new Set(known)) {
    const distance = editDistance(given, name);
    const prefix = given.length >= 3 && (name.startsWith(given) || given.startsWith(name));
    if (distance <= limit) scored.push({ name, score: distance });
    else if (prefix) scored.push({ name, score: limit + 1 });
  }
  return scored
    .sort((x, y) => x.score - y.score || x.name.localeCompare(y.name))
    .slice(0, 3)
    .map((s) => s.name);
}

/** " did you mean --a or --b?" for an unknown `--flag`, or '' when nothing is close. */
export function didYouMean(flag: string, known: readonly string[]): string {
  if (!flag.startsWith('--')) return '';
  const names = closeNames(flag.slice(2).split('=')[0]!, known).map((n) => `--${n}`);
  if (names.length === 0) return '';
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
  return `did you mean ${list}?`;
}

/**
 * The known config key closest to `name`, when it is close enough to be a slip of the keyboard:
 * at most 2 edits, and fewer than a third of the name (so "id" does not suggest "ip"). Case,
 * dashes and underscores are ignored, as a YAML file may spell a key either way.
 */
export function closestKey(name: string, known: readonly string[]): string | undefined {
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

/** ` (did you mean "x"?)` for an unknown config key, or ''. */
export function keyHint(name: string, known: readonly string[]): string {
  const c = closestKey(name, known);
  return c ? ` (did you mean "${c}"?)` : '';
}
