// `estuary coordinator`: bursts a site's batch system into clouds. `estuary coordinator status`
// prints what a running coordinator is doing.

import { defineCommand } from '../lib/command.ts';
import { runUntilSignalled } from '../lib/lifecycle.ts';
import { coordinatorErrors } from './errors.ts';
import { coordinatorOptions } from './options.ts';
import { startCoordinator, validate } from './service.ts';
import { statusTable, type StatusView } from './status/view.ts';

export const command = defineCommand({
  name: 'coordinator',
  summary: 'burst the batch system into clouds with drones that join it (Slurm)',
  description: `
Watches the batch system's pending jobs and, per site and machine type, sizes a pool of drones
with a controller (LSF RC threshold by default; COBalD linear and relative supply, GlideinWMS).
Drones join the cluster as dynamic nodes with features site_<site> and type_<type>, are drained
and stopped after --idle-time, never before --min-lifetime, and never past a site's quota. Every
drone is in a registry under --state-dir before anything is asked of a site, so a restart adopts
them and stops any orphan. \`estuary coordinator status\` prints sites and drones with their
state, age, cost and the reason of the last decision. See docs/COORDINATOR.md.`,
  positionals: [
    { name: 'action', describe: 'status: print the state of a running coordinator; simulate FILE: run a scenario file on the simulator', optional: true },
    { name: 'file', describe: 'for simulate: a scenario file (docs/BENCHMARKING.md, "Scenario files")', optional: true },
  ],
  examples: [
    { cmd: 'estuary coordinator --config /etc/estuary/coordinator.yaml', what: 'run with sites, machine types and Slurm from one file' },
    { cmd: 'estuary coordinator status --config /etc/estuary/coordinator.yaml', what: 'sites and drones of the running coordinator' },
    { cmd: 'estuary coordinator status --url http://10.0.0.5:9180', what: 'ask a coordinator elsewhere' },
    { cmd: 'estuary coordinator --config coordinator.yaml --print-config', what: 'check a config without starting' },
    { cmd: "estuary coordinator simulate bench/coordinator/scenarios/fermilab-nova.yaml --controller '{type: linear}'", what: 'what a policy would do on a scenario, simulated' },
  ],
  options: coordinatorOptions,
  async run({ config, origin, args, log }) {
    const action = args[0];
    if (action === 'status') {
      const base = config.url ?? `http://${config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host}:${config.listen.port}`;
      let view: StatusView;
      try {
        const res = await fetch(`${base.replace(/\/$/, '')}/api/v1/status`, { signal: AbortSignal.timeout(5000) });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        view = (await res.json()) as StatusView;
      } catch (err) {
        throw coordinatorErrors.statusUnreachable(base, (err as Error).message);
      }
      process.stdout.write(statusTable(view));
      return 0;
    }
    if (action === 'simulate') {
      if (!args[1]) throw coordinatorErrors.badScenario('(none)', 'file', 'give a scenario file: estuary coordinator simulate FILE');
      const { simulateFile } = await import('./sim/summary.ts');
      // A scenario's own controller is simulated unless one was given (flag, environment, file).
      const scenarioController = origin.controller === 'default';
      process.stdout.write(await simulateFile(args[1], config.controller, { json: config.json, market: config.simMarket, every: config.simEvery, scenarioController }));
      return 0;
    }
    if (action !== undefined) throw coordinatorErrors.badAction(action);
    const settings = validate(config);
    const service = await startCoordinator(settings, log);
    // SIGHUP (the terminal or ssh session closed) stops it like SIGTERM: a site script in flight
    // is then ended with its process group at the deadline, never left creating an instance.
    return runUntilSignalled(service, { log, shutdownTimeoutMs: config.shutdownTimeout, stopSignals: ['SIGINT', 'SIGTERM', 'SIGHUP'] });
  },
});
