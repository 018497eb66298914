// Turns a subcommand's argv into option values keyed by option key, with util.parseArgs doing the
// tokenising. Unknown flags and missing values become one-line ConfigErrors.

import { parseArgs } from 'node:util';
import { normaliseArgv } from '../lib/config/argv.ts';
import { configErrors } from '../lib/config/errors.ts';
import { didYouMean } from '../lib/config/suggest.ts';
import { flagName, type OptionTable } from '../lib/config/options.ts';

export interface ParsedArgv {
  readonly flags: Record<string, unknown>;
  readonly positionals: string[];
  readonly help: boolean;
  readonly printConfig: boolean;
  readonly configPath?: string;
}

type ParseArgsOptions = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

function isBoolean(table: OptionTable, key: string): boolean {
  return table[key]!.type.placeholder === 'BOOL';
}

function isList(table: OptionTable, key: string): boolean {
  return table[key]!.type.placeholder.endsWith(',...');
}

/** Every long flag the command takes, booleans also as --no-FLAG, without the dashes. */
function knownFlags(table: OptionTable): string[] {
  const out = ['help', 'config', 'print-config'];
  for (const key of Object.keys(table)) {
    out.push(flagName(key));
    if (isBoolean(table, key)) out.push(`no-${flagName(key)}`);
  }
  return out;
}

export function parseCommandArgv(command: string, table: OptionTable, argv: readonly string[]): ParsedArgv {
  const spec: ParseArgsOptions = {
    help: { type: 'boolean', short: 'h' },
    config: { type: 'string', short: 'c' },
    'print-config': { type: 'boolean' },
  };
  const byFlag = new Map<string, string>();
  for (const [key, opt] of Object.entries(table)) {
    const flag = flagName(key);
    byFlag.set(flag, key);
    spec[flag] = {
      type: isBoolean(table, key) ? 'boolean' : 'string',
      multiple: isList(table, key),
      ...(opt.short ? { short: opt.short } : {}),
    };
  }
  const args = normaliseArgv(table, argv);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args,
      options: spec,
      allowPositionals: true,
      allowNegative: true,
      strict: true,
    });
  } catch (err) {
    const e = err as { code?: string; message: string };
    // parseArgs names the flag inside quotes: "Option '-n, --count <value>' argument missing".
    const quoted = /'([^']+)'/.exec(e.message)?.[1] ?? e.message;
    const flag = /--[\w-]+/.exec(quoted)?.[0] ?? quoted.split(' ')[0]!;
    if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw configErrors.missingFlagValue(command, flag);
    throw configErrors.unknownFlag(command, flag, didYouMean(flag, knownFlags(table)));
  }
  const flags: Record<string, unknown> = {};
  for (const [flag, value] of Object.entries(parsed.values)) {
    const key = byFlag.get(flag);
    if (key !== undefined) flags[key] = value;
  }
  return {
    flags,
    positionals: parsed.positionals,
    help: parsed.values.help === true,
    printConfig: parsed.values['print-config'] === true,
    configPath: typeof parsed.values.config === 'string' ? parsed.values.config : undefined,
  };
}
