import { describe, expect, it } from 'vitest';
import { flagSynopsis, normaliseArgv } from '../../../lib/config/argv.ts';
import { option, optional, type OptionTable } from '../../../lib/config/options.ts';
import { bool, float, int, str } from '../../../lib/config/values.ts';
import { parseCommandArgv } from '../../../cli/argv.ts';

const table = {
  verify: option(bool(), true, 'verify'),
  shoalCompat: option(bool(), false, 'compat'),
  lon: optional(float(-180, 180, 'DEG'), 'longitude'),
  count: option(int(-10, 10), 1, 'count', { short: 'n' }),
  name: option(str(), 'x', 'a name'),
};

describe('argv spellings util.parseArgs does not take', () => {
  it('--flag=true|false on a boolean option', () => {
    expect(normaliseArgv(table, ['--verify=false', '--shoal-compat=YES', '--verify=on'])).toEqual([
      '--no-verify',
      '--shoal-compat',
      '--verify',
    ]);
    expect(parseCommandArgv('estuary t', table, ['--verify=false']).flags).toEqual({ verify: false });
  });
  it('refuses a boolean value it cannot read, in one line with the code', () => {
    expect(() => normaliseArgv(table, ['--verify=maybe'])).toThrow(
      expect.objectContaining({ code: 'ESTUARY_CONFIG_INVALID_VALUE' }),
    );
  });
  it('a negative number as an option value, long or short', () => {
    expect(parseCommandArgv('estuary t', table, ['--lon', '-73.6', '-n', '-5']).flags).toEqual({
      lon: '-73.6',
      count: '-5',
    });
    expect(parseCommandArgv('estuary t', table, ['--lon', '-.5']).flags).toEqual({ lon: '-.5' });
  });
  it('leaves everything else alone: other flags, text values, what follows --', () => {
    expect(normaliseArgv(table, ['--name', '-x', '--name=a=b', '--', '--verify=false'])).toEqual([
      '--name',
      '-x',
      '--name=a=b',
      '--',
      '--verify=false',
    ]);
    expect(() => parseCommandArgv('estuary t', table, ['--lon', '--verify'])).toThrow(/needs a value/);
  });
  it('--help names the negation of every boolean option', () => {
    expect(flagSynopsis(table, 'verify')).toBe('--verify, --no-verify');
    expect(flagSynopsis(table, 'lon')).toBe('--lon DEG');
  });
});

describe('every role', () => {
  it("--help names --no-X for each boolean option, and parses --X=false", async () => {
    const { commands } = await import('../../../cli/commands.ts');
    const { commandHelp } = await import('../../../cli/help.ts');
    const { commonOptions } = await import('../../../lib/command.ts');
    for (const entry of commands) {
      const cmd = await entry.load();
      const table: OptionTable = { ...cmd.options, ...commonOptions };
      const help = commandHelp(cmd, commonOptions);
      for (const key of Object.keys(table).filter((k) => table[k]!.type.placeholder === 'BOOL')) {
        const flag = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
        expect(help, `${cmd.name} --${flag}`).toContain(`--${flag}, --no-${flag}`);
        expect(parseCommandArgv(cmd.name, table, [`--${flag}=false`]).flags[key], cmd.name).toBe(false);
      }
    }
  });
});
