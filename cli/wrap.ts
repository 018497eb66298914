// Wrapping --help text to a terminal's width without breaking words: a word longer than the
// line stays whole on a line of its own (a URL or a flag must stay copyable). Pure.

/** Lines of `text` no wider than `width` where possible, each after `indent` spaces. */
export function wrap(text: string, width: number, indent = 0, firstIndent = indent): string[] {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const lines: string[] = [];
  let line = ' '.repeat(firstIndent);
  let empty = true;
  for (const w of words) {
    if (!empty && line.length + 1 + w.length > width) {
      lines.push(line);
      line = ' '.repeat(indent);
      empty = true;
    }
    line += empty ? w : ` ${w}`;
    empty = false;
  }
  if (!empty || lines.length === 0) lines.push(line);
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
