// The contract between the CLI and a role. A role exports one Command: its option table (the
// role's configuration schema), help text with examples, and run(). The CLI resolves the
// configuration, builds the logger and hands both to run(); the role never parses argv itself.

import { option, type ConfigOf, type OptionTable } from './config/options.ts';
import type { Origin } from './config/resolve.ts';
import { duration, oneOf } from './config/values.ts';
import type { Logger } from './log.ts';
import { LOG_LEVELS } from './log.ts';

/** Options every command takes, resolved from the same four sources as the role's own. */
export const commonOptions = {
  logLevel: option(oneOf(LOG_LEVELS), 'info', 'log level'),
  logFormat: option(
    oneOf(['auto', 'json', 'pretty'] as const),
    'auto',
    'pretty: one line per event with local time and level; json: JSON lines; auto: pretty on a terminal, else json',
  ),
  shutdownTimeout: option(
    duration(0, 3_600_000),
    10_000,
    'how long in-flight work may take to finish after SIGINT/SIGTERM',
  ),
} satisfies OptionTable;

export interface Positional {
  readonly name: string;
  readonly describe: string;
  readonly optional?: boolean;
}

export interface Example {
  readonly cmd: string;
  readonly what: string;
}

export interface CommandContext<O extends OptionTable> {
  readonly config: ConfigOf<O> & ConfigOf<typeof commonOptions>;
  /** Where each option's value came from: a default may yield to what an input file says. */
  readonly origin: Readonly<Partial<Record<string, Origin>>>;
  readonly args: readonly string[];
  readonly log: Logger;
}

export interface Command<O extends OptionTable = OptionTable> {
  /** The subcommand word, also the role name used in ESTUARY_<ROLE>_* and config sections. */
  readonly name: string;
  readonly summary: string;
  readonly description: string;
  readonly positionals?: readonly Positional[];
  readonly examples: readonly Example[];
  readonly options: O;
  /** Returns the exit status; long-running roles return after a clean stop. */
  run(ctx: CommandContext<O>): Promise<number>;
}

export function defineCommand<O extends OptionTable>(command: Command<O>): Command<O> {
  return command;
}
