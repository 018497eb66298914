// docker-compose.yml cannot be run here (no Docker engine), so every estuary service's command is
// checked the way the CLI would check it: a real subcommand, known flags, valid values.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { commands } from '../../cli/commands.ts';
import { prepareCommand } from '../../cli/main.ts';

interface ComposeService {
  build?: unknown;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
}

const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), {
  merge: true,
}) as { services: Record<string, ComposeService> };
const estuaryServices = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);

describe('docker-compose.yml', () => {
  it('describes the whole deployment', () => {
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining(['rabbitmq', 'minio', 'discovery', 'gateway', 'agent']),
    );
    expect(estuaryServices.map(([, s]) => s.command?.[0])).toEqual(
      expect.arrayContaining(['discovery', 'gateway', 'agent']),
    );
  });

  it.each(estuaryServices)(
    'service %s runs a real estuary command with valid flags',
    async (_name, service) => {
      const [sub, ...argv] = service.command ?? [];
      const entry = commands.find((c) => c.name === sub);
      expect(entry, `estuary has no command "${sub}"`).toBeDefined();
      const command = await entry!.load();
      const env = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v)]),
      );
      expect(() => prepareCommand(command, argv, env)).not.toThrow();
    },
  );
});
