// Writes docs/CONFIGURATION.md from the option tables of every registered command, so the
// reference cannot drift from the code. `npm run docs` runs it; a test fails when it is stale.

import { writeFileSync } from 'node:fs';
import { commands } from '../cli/commands.ts';
import { commonOptions } from '../lib/command.ts';
import { describeDefault, envName, flagName, type OptionTable } from '../lib/config/options.ts';

const HEADER = `# Configuration

Every option of every command can be set four ways. The first that is set wins:

1. a flag: \`--cache-dir /var/cache/estuary\`
2. an environment variable: \`ESTUARY_<COMMAND>_<OPTION>\` (for example \`ESTUARY_GATEWAY_CACHE_DIR\`), then the
   shared form \`ESTUARY_<OPTION>\` (\`ESTUARY_CACHE_DIR\`), handy for values several roles on one host share
   such as \`ESTUARY_AMQP\`
3. a config file named by \`--config FILE\` or \`ESTUARY_CONFIG\`: YAML or JSON, keys spelled like the flags
   (\`cache-dir\`; \`cache_dir\` and \`cacheDir\` are accepted too), either at the top level or under a
   section named after the command, so one file can configure every role on a host:

   \`\`\`yaml
   gateway:
     cache-dir: /var/cache/estuary
     disk-cache: 50GiB
   agent:
     amqp: amqp://shoal:secret@broker.example.org
   \`\`\`
4. the default shown below.

A value that does not parse stops the command before it starts, with one line naming the option, the
value and what is allowed, and exit status 2. \`--print-config\` prints the resolved configuration and
where each value came from (secrets hidden) without starting anything.

Sizes take \`KiB MiB GiB TiB\` (powers of 1024) or \`k KB M MB G GB\` (powers of 1000); durations take
\`ms s m h d\`, and a bare number is seconds. Lists are comma-separated, YAML/JSON arrays, or repeated flags.

This page is generated from the code by \`npm run docs\`.
`;

function table(role: string, options: OptionTable): string {
  const rows = Object.entries(options).map(([key, spec]) => {
    const dflt = describeDefault(spec);
    const cell = (s: string) => s.replace(/\|/g, '\\|');
    return `| \`--${flagName(key)}\`${spec.short ? ` (\`-${spec.short}\`)` : ''} | \`${envName(role, key)}\` | ${cell(spec.type.placeholder)} | ${dflt ? `\`${cell(dflt)}\`` : '—'} | ${cell(spec.describe)} |`;
  });
  return ['| flag | environment | value | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

export async function renderConfigurationDoc(): Promise<string> {
  const parts = [HEADER];
  parts.push('## Options every command takes\n', table('<command>', commonOptions), '');
  for (const entry of commands) {
    const command = await entry.load();
    parts.push(
      `## estuary ${command.name}\n`,
      `${command.summary}\n`,
      table(command.name, command.options),
      '',
    );
  }
  return `${parts.join('\n').trimEnd()}\n`;
}

if (import.meta.main) {
  const path = new URL('../docs/CONFIGURATION.md', import.meta.url);
  writeFileSync(path, await renderConfigurationDoc());
  console.log(`wrote ${path.pathname}`);
}
