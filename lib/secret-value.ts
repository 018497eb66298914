// Secrets given on the command line show up in `ps`; `@FILE` reads the value from a file instead
// (for example a systemd credential or a mode-600 file). Each non-empty line of the file is one value.

import { readFileSync } from 'node:fs';

export function expandSecret(value: string, onError: (path: string, reason: string) => Error): string[] {
  if (!value.startsWith('@')) return [value];
  const path = value.slice(1);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw onError(path, (err as NodeJS.ErrnoException).code ?? String(err));
  }
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}
