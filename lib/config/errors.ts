// Errors in what the user typed or wrote: flags, environment variables and config files.
// All exit with status 2, the convention for usage errors.

import { type CodeDoc, codeTable, EstuaryError, type ErrorsSection } from '../errors.ts';
import { MISSING_PACKAGE_CODES } from '../optional-package.ts';
import { NOT_TLS_CODES } from '../tls-mismatch.ts';
import { escapeControls } from '../terminal-text.ts';

/** Each code's row in docs/ERRORS.md. */
export const CONFIG_CODES = {
  ESTUARY_CONFIG_INVALID_VALUE: {
    meaning: 'a flag, `ESTUARY_*` variable or config-file key has a value of the wrong form; the message names the source, the value and what is allowed',
    fix: 'correct the value; `--print-config` shows where each value comes from',
  },
  ESTUARY_CONFIG_UNKNOWN_FLAG: {
    meaning: 'a flag the command does not have; when one of its flags is within two typing mistakes, or starts the same way, the message asks "did you mean --that-flag?"',
    fix: 'use the flag suggested, or see `estuary <command> --help`',
  },
  ESTUARY_CONFIG_MISSING_VALUE: {
    meaning: 'a flag that takes a value was given none',
    fix: 'add the value after the flag',
  },
  ESTUARY_CONFIG_UNKNOWN_COMMAND: {
    meaning: 'the first word is not a command',
    fix: 'see `estuary --help` for the list',
  },
  ESTUARY_CONFIG_BAD_ARGUMENTS: {
    meaning: 'missing or extra positional arguments',
    fix: "see the command's usage line in `--help`",
  },
  ESTUARY_CONFIG_UNKNOWN_KEY: {
    meaning: "a config-file key that is not an option of the command (often a typo), or a section whose name is the command's misspelt (`coordinater:`)",
    fix: 'correct the key; the message suggests the closest known one and lists them all',
  },
  ESTUARY_CONFIG_FILE_SHAPE: {
    meaning: 'the config file (or a role section in it) is not a mapping of names to values',
    fix: 'write `key: value` lines, optionally under a `<command>:` section',
  },
  ESTUARY_CONFIG_FILE_UNREADABLE: {
    meaning: 'the `--config` file does not exist or cannot be read',
    fix: 'check the path and permissions',
  },
  ESTUARY_CONFIG_FILE_SYNTAX: {
    meaning: 'the config file is neither valid YAML nor JSON',
    fix: 'fix the syntax at the position the message gives',
  },
} satisfies Record<string, CodeDoc>;
import { keyHint } from './suggest.ts';

export class ConfigError extends EstuaryError {
  constructor(code: keyof typeof CONFIG_CODES, message: string) {
    super(code, message, { exitCode: 2 });
    this.name = 'ConfigError';
  }
}

export const configErrors = {
  invalidValue: (where: string, value: string, expected: string) =>
    // A value from the environment or a file may hold line breaks: the message stays one line.
    new ConfigError('ESTUARY_CONFIG_INVALID_VALUE', `invalid value "${escapeControls(value)}" for ${where}: ${expected}`),
  /** `hint` is didYouMean()'s "did you mean --x?", or ''. */
  unknownFlag: (command: string, flag: string, hint = '') =>
    new ConfigError(
      'ESTUARY_CONFIG_UNKNOWN_FLAG',
      hint
        ? `unknown option ${flag} for ${command}; ${hint} (\`${command} --help\` lists the options)`
        : `unknown option ${flag} for ${command}; run \`${command} --help\` to see the options`,
    ),
  missingFlagValue: (command: string, flag: string) =>
    new ConfigError('ESTUARY_CONFIG_MISSING_VALUE', `option ${flag} of ${command} needs a value`),
  unknownCommand: (name: string, known: string[]) =>
    new ConfigError(
      'ESTUARY_CONFIG_UNKNOWN_COMMAND',
      `unknown command "${name}"; the commands are: ${known.join(', ')} (see \`estuary --help\`)`,
    ),
  badArguments: (command: string, problem: string) =>
    new ConfigError('ESTUARY_CONFIG_BAD_ARGUMENTS', `${command}: ${problem}; see \`${command} --help\``),
  unknownFileKey: (path: string, key: string, role: string, known: string[]) =>
    new ConfigError(
      'ESTUARY_CONFIG_UNKNOWN_KEY',
      `${path}: unknown key "${key}" for ${role}${keyHint(key.split('.').pop()!, known)}; known keys: ${known.join(', ')}`,
    ),
  misspeltSection: (path: string, section: string, role: string) =>
    new ConfigError(
      'ESTUARY_CONFIG_UNKNOWN_KEY',
      `${path}: unknown section "${section}:" (did you mean "${role}:"?); this file has no ${role} section`,
    ),
  fileNotMapping: (path: string) =>
    new ConfigError('ESTUARY_CONFIG_FILE_SHAPE', `${path}: expected a mapping of option names to values`),
  fileUnreadable: (path: string, reason: string) =>
    new ConfigError('ESTUARY_CONFIG_FILE_UNREADABLE', `cannot read config file ${path}: ${reason}`),
  fileSyntax: (path: string, reason: string) =>
    new ConfigError('ESTUARY_CONFIG_FILE_SYNTAX', `config file ${path} is not valid YAML or JSON: ${reason}`),
};

/** The first part of docs/ERRORS.md: what the user typed or wrote, and how estuary was installed. */
export const configErrorsDoc: ErrorsSection = {
  title: 'configuration and command line',
  tables: [codeTable({ ...CONFIG_CODES, ...NOT_TLS_CODES, ...MISSING_PACKAGE_CODES })],
};
