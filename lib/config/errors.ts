// Errors in what the user typed or wrote: flags, environment variables and config files.
// All exit with status 2, the convention for usage errors.

import { EstuaryError } from '../errors.ts';
import { keyHint } from './suggest.ts';

export class ConfigError extends EstuaryError {
  constructor(code: string, message: string) {
    super(code, message, { exitCode: 2 });
    this.name = 'ConfigError';
  }
}

export const configErrors = {
  invalidValue: (where: string, value: string, expected: string) =>
    new ConfigError('ESTUARY_CONFIG_INVALID_VALUE', `invalid value "${value}" for ${where}: ${expected}`),
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
