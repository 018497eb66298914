// Reads a --config file. YAML is a superset of JSON, so one parser serves both. The parser is
// loaded only when a file is given: a mount configured by flags alone held 2.8 MB more with it
// loaded at start, for its whole life (docs/BENCHMARKING.md, "What the mount holds without the AWS
// SDK").

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
