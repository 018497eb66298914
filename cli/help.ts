// --help text, derived from the command's option table so it cannot drift from the parser.

import type { Command } from '../lib/command.ts';
import { flagSynopsis } from '../lib/config/argv.ts';
import { describeDefault, envName, type OptionTable } from '../lib/config/options.ts';

export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
}

export function topLevelHelp(commands: readonly CommandEntry[], version: string): string {
  const width = Math.max(8, ...commands.map((c) => c.name.length));
  const lines = [
    `estuary ${version}: staging and caching between research sites and clouds`,
    '',
    'Usage: estuary <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `estuary <command> --help` for a command's options and examples.",
    'Options come from flags, then ESTUARY_* environment variables, then --config FILE, then defaults.',
    'Documentation: docs/ in the package, starting with README.md.',
  ];
  return `${lines.join('\n')}\n`;
}

function optionLines(role: string, table: OptionTable): string[] {
  const rows = Object.entries(table).map(([key, spec]) => {
    const left = `${spec.short ? `-${spec.short}, ` : '    '}${flagSynopsis(table, key)}`;
    const dflt = describeDefault(spec);
    const right = `${spec.describe}${dflt ? ` (default ${dflt})` : ''} [${envName(role, key)}]`;
    return [left, right] as const;
  });
  const width = Math.min(34, Math.max(...rows.map(([l]) => l.length)));
  return rows.map(([l, r]) =>
    l.length > width ? `  ${l}\n  ${' '.repeat(width)}  ${r}` : `  ${l.padEnd(width)}  ${r}`,
  );
}

export function commandHelp(command: Command, common: OptionTable): string {
  const pos = (command.positionals ?? []).map((p) => (p.optional ? `[${p.name}]` : p.name)).join(' ');
  const lines = [
    `Usage: estuary ${command.name} [options]${pos ? ` ${pos}` : ''}`,
    '',
    command.summary,
    '',
    ...command.description.trim().split('\n'),
    '',
  ];
  if (command.positionals?.length) {
    lines.push('Arguments:', ...command.positionals.map((p) => `  ${p.name}  ${p.describe}`), '');
  }
  lines.push('Options:', ...optionLines(command.name, command.options), '');
  lines.push(
    'Common options:',
    ...optionLines(command.name, common),
    '  -c, --config FILE                   YAML or JSON file; keys as the flags, top level or under a `' +
      command.name +
      ':` section',
    '      --print-config                  print the resolved configuration with where each value came from, and exit',
    '  -h, --help                          show this help',
    '',
    'Examples:',
  );
  for (const ex of command.examples) lines.push(`  ${ex.cmd}`, `      ${ex.what}`);
  return `${lines.join('\n')}\n`;
}
