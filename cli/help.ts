// --help text, derived from the command's option table so it cannot drift from the parser.

import type { Command } from '../lib/command.ts';
import { flagSynopsis } from '../lib/config/argv.ts';
import { describeDefault, envName, type OptionTable } from '../lib/config/options.ts';
import { wrap, wrapCommand, wrapParagraphs } from './wrap.ts';

export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
}

export function topLevelHelp(commands: readonly CommandEntry[], version: string, width = 80): string {
  const left = Math.max(8, ...commands.map((c) => c.name.length));
  const lines = [
    ...wrap(`estuary ${version}: staging and caching between research sites and clouds`, width),
    '',
    'Usage: estuary <command> [options]',
    '',
    'Commands:',
    ...commands.flatMap((c) => rows(`  ${c.name.padEnd(left)}  `, c.summary, width)),
    '',
    ...wrap("Run `estuary <command> --help` for a command's options and examples.", width),
    ...wrap('Options come from flags, then ESTUARY_* environment variables, then --config FILE, then defaults.', width),
    ...wrap('Documentation: docs/ in the package, starting with README.md.', width),
  ];
  return `${lines.join('\n')}\n`;
}

/** `head` then `text` wrapped beside it, continuation lines aligned under the text. */
function rows(head: string, text: string, width: number): string[] {
  const out = wrap(text, width, head.length, head.length);
  out[0] = head + out[0]!.slice(head.length);
  return out;
}

/** The left column of option rows: wider synopses go on a line of their own. */
const OPTION_COLUMN = 34;

function optionRows(pairs: readonly (readonly [string, string])[], width: number): string[] {
  const col = OPTION_COLUMN;
  return pairs.flatMap(([l, r]) =>
    l.length > col ? [`  ${l}`, ...wrap(r, width, col + 4)] : rows(`  ${l.padEnd(col)}  `, r, width),
  );
}

function optionLines(role: string, table: OptionTable, width: number): string[] {
  const pairs = Object.entries(table).map(([key, spec]) => {
    const left = `${spec.short ? `-${spec.short}, ` : '    '}${flagSynopsis(table, key)}`;
    // A boolean that is off unless given says nothing: "(default false)" only adds noise.
    const dflt = spec.type.placeholder === 'BOOL' && spec.default === false ? '' : describeDefault(spec);
    const right = `${spec.describe}${dflt ? ` (default ${dflt})` : ''} [${envName(role, key)}]`;
    return [left, right] as const;
  });
  return optionRows(pairs, width);
}

/** The options that matter when the first argument is `first` (all when it is not given). */
function scoped(table: OptionTable, first: string | undefined): OptionTable {
  if (first === undefined || !Object.values(table).some((o) => o.scope?.includes(first))) return table;
  return Object.fromEntries(Object.entries(table).filter(([, o]) => !o.scope || o.scope.includes(first)));
}

export function commandHelp(command: Command, common: OptionTable, width = 80, first?: string): string {
  const pos = (command.positionals ?? []).map((p) => (p.optional ? `[${p.name}]` : p.name)).join(' ');
  const lines = [
    ...wrap(`Usage: estuary ${command.name} [options]${pos ? ` ${pos}` : ''}`, width, 4, 0),
    '',
    ...wrap(command.summary, width),
    '',
    ...wrapParagraphs(command.description, width),
    '',
  ];
  if (command.positionals?.length) {
    const left = Math.max(...command.positionals.map((p) => p.name.length));
    lines.push('Arguments:', ...command.positionals.flatMap((p) => rows(`  ${p.name.padEnd(left)}  `, p.describe, width)), '');
  }
  const options = scoped(command.options, first);
  const only = options === command.options ? '' : ` (for ${first}; \`estuary ${command.name} --help\` lists all)`;
  lines.push(`Options${only}:`, ...optionLines(command.name, options, width), '');
  const fixed = [
    ['-c, --config FILE', `YAML or JSON file; keys as the flags, top level or under a \`${command.name}:\` section`],
    ['    --print-config', 'print the resolved configuration with where each value came from, and exit'],
    ['-h, --help', 'show this help'],
  ] as const;
  lines.push('Common options:', ...optionLines(command.name, common, width), ...optionRows(fixed, width), '', 'Examples:');
  for (const ex of command.examples) lines.push(...wrapCommand(ex.cmd, width), ...wrap(ex.what, width, 6));
  return `${lines.join('\n')}\n`;
}
