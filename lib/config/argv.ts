// Two spellings util.parseArgs does not take, rewritten before it sees argv, for every role:
//   --verify=false / --verify=true   a boolean option with a value (parseArgs wants --no-verify)
//   --lon -73.6 / -n -5              a negative number as the value of an option (parseArgs reads
//                                    "-73.6" as more flags and reports the value missing)
// A boolean given a value that is not a boolean word is refused here, in one line. Pure.

import { configErrors } from './errors.ts';
import { flagName, type OptionTable } from './options.ts';

const TRUE = ['true', 'yes', '1', 'on'];
const FALSE = ['false', 'no', '0', 'off'];
const NEGATIVE_NUMBER = /^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

export function isBooleanOption(table: OptionTable, key: string): boolean {
  return table[key]!.type.placeholder === 'BOOL';
}

/** How --help writes an option's flag: a boolean shows that its negation exists. */
export function flagSynopsis(table: OptionTable, key: string): string {
  const flag = flagName(key);
  return isBooleanOption(table, key)
    ? `--${flag}, --no-${flag}`
    : `--${flag} ${table[key]!.type.placeholder}`;
}

export function normaliseArgv(table: OptionTable, argv: readonly string[]): string[] {
  const booleans = new Set<string>();
  const takesValue = new Set<string>(['--config', '-c']);
  for (const [key, spec] of Object.entries(table)) {
    const flag = flagName(key);
    if (isBooleanOption(table, key)) booleans.add(flag);
    else {
      takesValue.add(`--${flag}`);
      if (spec.short) takesValue.add(`-${spec.short}`);
    }
  }
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const withValue = /^--([\w-]+)=(.*)$/s.exec(arg);
    if (withValue && booleans.has(withValue[1]!)) {
      const [, flag, value] = withValue as unknown as [string, string, string];
      const v = value.toLowerCase();
      if (TRUE.includes(v)) out.push(`--${flag}`);
      else if (FALSE.includes(v)) out.push(`--no-${flag}`);
      else throw configErrors.invalidValue(`--${flag}`, value, 'expected true or false');
      continue;
    }
    const next = argv[i + 1];
    if (takesValue.has(arg) && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(arg.startsWith('--') ? `${arg}=${next}` : `${arg}${next}`);
      i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}
