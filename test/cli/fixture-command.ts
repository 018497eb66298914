// A small command used to test the CLI machinery independently of any role.

import { defineCommand } from '../../lib/command.ts';
import { option, optional } from '../../lib/config/options.ts';
import { hostPort, int, list, size, str } from '../../lib/config/values.ts';

export const seen: { config?: unknown; args?: readonly string[] } = {};

export const fixtureCommand = defineCommand({
  name: 'fixture',
  summary: 'a command for tests',
  description: 'Records the configuration it was given.',
  positionals: [{ name: 'TARGET', describe: 'what to act on' }],
  examples: [{ cmd: 'estuary fixture --listen :9000 x', what: 'listen on port 9000' }],
  options: {
    listen: option(hostPort(), { host: '0.0.0.0', port: 3128 }, 'where to listen'),
    memCache: option(size(), 2 ** 20, 'memory cache size'),
    count: option(int(1, 10), 3, 'how many', { short: 'n' }),
    peers: option(list(str('HOST')), [] as string[], 'peers'),
    token: optional(str(), 'a secret', { secret: true }),
  },
  async run(ctx) {
    seen.config = ctx.config;
    seen.args = ctx.args;
    return 0;
  },
});
