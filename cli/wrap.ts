// Wrapping --help text to a terminal's width without breaking words: a word longer than the
// line stays whole on a line of its own (a URL or a flag must stay copyable). Pure.

/**
 * A word too long for a line, cut after its commas (a default list such as 127.0.0.0/8,::1/128,…):
 * the pieces follow each other without a space, so a copied list stays one word.
 */
function pieces(word: string, room: number): { text: string; glued: boolean }[] {
  if (word.length <= room || !/[,|]/.test(word)) return [{ text: word, glued: false }];
  return word.split(/(?<=[,|])/).map((text, i) => ({ text, glued: i > 0 }));
}

/** Lines of `text` no wider than `width` where possible, each after `indent` spaces. */
export function wrap(text: string, width: number, indent = 0, firstIndent = indent): string[] {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const lines: string[] = [];
  let line = ' '.repeat(firstIndent);
  let empty = true;
  for (const { text: w, glued } of words.flatMap((word) => pieces(word, width - indent))) {
    const sep = empty || glued ? '' : ' ';
    if (!empty && line.length + sep.length + w.length > width) {
      lines.push(line);
      line = ' '.repeat(indent);
      empty = true;
    }
    // A single word wider than the column (an environment variable's name, a URL) moves left
    // as far as it must to end at the width, rather than past it.
    if (empty && line.length + w.length > width) line = ' '.repeat(Math.max(0, width - w.length));
    line += empty ? w : `${sep}${w}`;
    empty = false;
  }
  if (!empty || lines.length === 0) lines.push(line);
  return lines;
}

/**
 * An example command as shell lines no wider than `width`: cut before an option, `&&`, `|` or
 * `>`, each line but the last ending in ` \\`, so it still pastes into a shell as written.
 */
export function wrapCommand(cmd: string, width: number, indent = 2): string[] {
  const first = ' '.repeat(indent);
  if (first.length + cmd.length <= width) return [first + cmd];
  const grouped: string[] = [];
  for (const token of cmd.split(' ')) {
    if (grouped.length > 0 && !/^(-|&&|\||>)/.test(token)) grouped[grouped.length - 1] += ` ${token}`;
    else grouped.push(token);
  }
  // An option whose value is too long to share its line (a long URL) gets the value on the next.
  const room = width - indent - 6;
  const segments = grouped.flatMap((seg) => (seg.length > room ? seg.split(' ') : [seg]));
  const lines: string[] = [];
  let line = first;
  for (const seg of segments) {
    if (line.trim() !== '' && line.length + 1 + seg.length + 2 > width) {
      lines.push(`${line} \\`);
      line = ' '.repeat(indent + 4);
    }
    line += line.trim() === '' ? seg : ` ${seg}`;
  }
  lines.push(line);
  return lines;
}

/** Every paragraph (lines separated by a blank line) wrapped on its own. */
export function wrapParagraphs(text: string, width: number, indent = 0): string[] {
  return text
    .trim()
    .split(/\n\s*\n/)
    .flatMap((p, i) => [...(i > 0 ? [''] : []), ...wrap(p, width, indent)]);
}

/** The width help is written for: the terminal's, else 80 columns, never below 40. */
export function helpWidth(columns: number | undefined): number {
  return Math.max(40, columns && columns > 0 ? columns : 80);
}
