// Reads a --config file. YAML is a superset of JSON, so one parser serves both. The parser is
// loaded only when a file is given: it holds about 8 MB of memory, which a mount configured by
// flags alone would keep for its whole life.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { configErrors } from './errors.ts';

const require = createRequire(import.meta.url);

export function readConfigFile(path: string): { path: string; data: unknown } {
  let textContent: string;
  try {
    textContent = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code);
    throw configErrors.fileUnreadable(path, reason);
  }
  try {
    const { parse } = require('yaml') as typeof import('yaml');
    return { path, data: parse(textContent) };
  } catch (err) {
    throw configErrors.fileSyntax(path, (err as Error).message.split('\n')[0] ?? 'parse error');
  }
}
