// Reads a --config file. YAML is a superset of JSON, so one parser serves both.

import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { configErrors } from './errors.ts';

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
    return { path, data: parse(textContent) };
  } catch (err) {
    throw configErrors.fileSyntax(path, (err as Error).message.split('\n')[0] ?? 'parse error');
  }
}
