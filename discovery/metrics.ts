// Discovery's Prometheus metrics, on their own prom-client registry (names in lib/metric-names.ts).

import { Counter, Gauge, Registry as PromRegistry } from 'prom-client';
import { DISCOVERY_METRICS } from '../lib/metric-names.ts';
import { counts, type State, view } from './page-model.ts';
import { isVerified, type Registry } from './registry.ts';

const STATES: readonly State[] = ['late', 'failing', 'drift', 'pending', 'healthy', 'unchecked'];

export interface DiscoveryMetrics {
  readonly registry: PromRegistry;
  readonly heartbeats: Counter<'result'>;
  readonly queries: Counter<'endpoint'>;
}

const BROKER_STATES = ['connected', 'disconnected', 'refused'] as const;

export function createMetrics(
  caches: Registry,
  broker: () => (typeof BROKER_STATES)[number] = () => 'disconnected',
): DiscoveryMetrics {
  const registry = new PromRegistry();
  const heartbeats = new Counter({
    name: DISCOVERY_METRICS.heartbeats,
    help: 'Heartbeats consumed, by result: accepted, goodbye, or the reason they were dropped.',
    labelNames: ['result'],
    registers: [registry],
  });
  const queries = new Counter({
    name: DISCOVERY_METRICS.queries,
    help: 'Nearest-cache queries answered, by endpoint.',
    labelNames: ['endpoint'],
    registers: [registry],
  });
  new Gauge({
    name: DISCOVERY_METRICS.caches,
    help: 'Caches in the registry, by verification state.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      let verified = 0;
      for (const e of caches.values()) if (isVerified(e)) verified++;
      this.set({ state: 'verified' }, verified);
      this.set({ state: 'unverified' }, caches.size - verified);
    },
  });
  // The page's triage states, decided by the same function, so the list, its summary line and
  // an alert on this gauge never disagree about how many caches are late or failing.
  new Gauge({
    name: DISCOVERY_METRICS.cacheStates,
    help: 'Caches in the registry by the state the page shows: late, failing, drift, pending, healthy, unchecked.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const now = Date.now();
      const c = counts([...caches.values()].map((e) => view(e, now)));
      for (const state of STATES) this.set({ state }, c[state]);
    },
  });
  new Gauge({
    name: DISCOVERY_METRICS.broker,
    help: 'State of the connection to the AMQP broker: 1 for the current state (refused: the broker refuses the login or the permissions).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const now = broker();
      for (const s of BROKER_STATES) this.set({ state: s }, s === now ? 1 : 0);
    },
  });
  return { registry, heartbeats, queries };
}
