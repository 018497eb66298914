// `estuary <command> [options]`: finds the command, resolves its configuration, builds its logger
// and runs it. Every error that is the user's input ends as one line on stderr and exit status 2;
// anything else is logged with its stack and exits 1.

import { readFileSync } from 'node:fs';
import { commonOptions, type Command } from '../lib/command.ts';
import { configErrors } from '../lib/config/errors.ts';
import { readConfigFile } from '../lib/config/file.ts';
import { didYouMean } from '../lib/config/suggest.ts';
import type { OptionTable } from '../lib/config/options.ts';
import { printable, resolveConfig } from '../lib/config/resolve.ts';
import { isEstuaryError, oneLine } from '../lib/errors.ts';
import { createLogger, flushLogs, ignoreBrokenPipes } from '../lib/log.ts';
import { missingPackage, missingPackageOf } from '../lib/optional-package.ts';
import { parseCommandArgv } from './argv.ts';
import { commands as builtIn, type CommandEntry } from './commands.ts';
import { commandHelp, topLevelHelp } from './help.ts';
import { helpWidth } from './wrap.ts';

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Record<string, string | undefined>;
  /** The terminal's width when stdout is one; help wraps to it (else to 80 columns). */
  readonly columns?: number;
}

const processIo: CliIo = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  env: process.env,
  columns: process.stdout.isTTY ? process.stdout.columns : undefined,
};

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export interface Prepared {
  readonly help: boolean;
  readonly printConfig: boolean;
  readonly printed: Record<string, unknown>;
  readonly config: Parameters<Command['run']>[0]['config'];
  readonly origin: Parameters<Command['run']>[0]['origin'];
  readonly positionals: string[];
}

/**
 * Parses and validates a command line exactly as running it would, without running it: used by
 * the CLI itself and by checks of deployment files (docker-compose, systemd units).
 */
export function prepareCommand(command: Command, argv: readonly string[], env: CliIo['env']): Prepared {
  const table = { ...command.options, ...commonOptions } as OptionTable;
  const parsed = parseCommandArgv(`estuary ${command.name}`, table, argv);
  if (parsed.help)
    return {
      help: true,
      printConfig: false,
      printed: {},
      config: {} as Prepared['config'],
      origin: {},
      positionals: parsed.positionals,
    };
  const configPath = parsed.configPath ?? env.ESTUARY_CONFIG;
  const file = configPath ? readConfigFile(configPath) : undefined;
  const resolved = resolveConfig(command.name, table, { flags: parsed.flags, env, file });
  const positionals = parsed.positionals;
  if (!parsed.printConfig) {
    const declared = command.positionals ?? [];
    const required = declared.filter((p) => !p.optional);
    if (positionals.length < required.length) {
      const missing = required.slice(positionals.length).map((p) => p.name);
      throw configErrors.badArguments(`estuary ${command.name}`, `missing ${missing.join(' and ')}`);
    }
    if (positionals.length > declared.length) {
      const extra = positionals.slice(declared.length);
      throw configErrors.badArguments(`estuary ${command.name}`, `unexpected argument ${extra.join(' ')}`);
    }
  }
  return {
    help: false,
    printConfig: parsed.printConfig,
    printed: parsed.printConfig ? printable(table, resolved) : {},
    config: resolved.config as Prepared['config'],
    origin: resolved.origin,
    positionals,
  };
}

async function runCommand(command: Command, argv: readonly string[], io: CliIo): Promise<number> {
  const prepared = prepareCommand(command, argv, io.env);
  if (prepared.help) {
    io.stdout(commandHelp(command, commonOptions, helpWidth(io.columns), prepared.positionals[0]));
    return 0;
  }
  if (prepared.printConfig) {
    io.stdout(`${JSON.stringify(prepared.printed, null, 2)}\n`);
    return 0;
  }
  const { config, origin } = prepared;
  const log = createLogger({ level: config.logLevel, format: config.logFormat, role: command.name });
  return await command.run({ config, origin, args: prepared.positionals, log });
}

/** The command's module; a package it imports that the install left out is named in one line. */
async function load(entry: CommandEntry): Promise<Command> {
  try {
    return await entry.load();
  } catch (err) {
    const pkg = missingPackageOf(err);
    throw pkg ? missingPackage(pkg, { feature: `estuary ${entry.name}` }) : err;
  }
}

export async function runCli(
  argv: readonly string[],
  io: CliIo = processIo,
  registry: readonly CommandEntry[] = builtIn,
): Promise<number> {
  const [first, ...rest] = argv;
  try {
    if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
      if (first === 'help' && rest[0]) return await runCli([rest[0], '--help'], io, registry);
      io.stdout(topLevelHelp(registry, version(), helpWidth(io.columns)));
      return 0;
    }
    if (first === '--version' || first === '-V') {
      io.stdout(`${version()}\n`);
      return 0;
    }
    if (first.startsWith('-')) throw configErrors.unknownFlag('estuary', first, didYouMean(first, ['help', 'version']));
    // Two-word commands ("gateway credentials") win over their first word.
    const pair = rest[0] !== undefined ? registry.find((c) => c.name === `${first} ${rest[0]}`) : undefined;
    if (pair) return await runCommand(await load(pair), rest.slice(1), io);
    const entry = registry.find((c) => c.name === first);
    if (!entry)
      throw configErrors.unknownCommand(
        first,
        registry.map((c) => c.name),
      );
    return await runCommand(await load(entry), rest, io);
  } catch (err) {
    if (isEstuaryError(err)) {
      // Messages that name their command ("estuary bench: …") carry their own prefix.
      io.stderr(err.message.startsWith('estuary ') ? `${err.message}\n` : `estuary: ${err.message}\n`);
      return err.exitCode;
    }
    io.stderr(`estuary: unexpected failure: ${oneLine(err)}\n${(err as Error)?.stack ?? ''}\n`);
    return 1;
  }
}

export async function main(): Promise<void> {
  ignoreBrokenPipes();
  const code = await runCli(process.argv.slice(2));
  flushLogs();
  process.exitCode = code;
}
