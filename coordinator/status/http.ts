// The coordinator's HTTP face: /api/v1/status and /api/v1/drones[/ID] (JSON), / (the page, no
// JavaScript), /metrics (Prometheus). Read-only; it never changes a drone.

import Fastify, { type FastifyInstance } from 'fastify';
import type { DroneRegistry } from '../registry.ts';
import { renderPage } from './page.ts';
import { timelineSvg } from './timeline-svg.ts';
import type { StatusView } from './view.ts';
import type { TimelinePoint } from '../coordinator.ts';
import type { Registry as PromRegistry } from 'prom-client';

export interface HttpDeps {
  readonly view: (includeDown?: boolean) => StatusView;
  readonly timeline: () => readonly TimelinePoint[];
  readonly registry: DroneRegistry;
  readonly metrics: PromRegistry;
}

export const STATUS_PATHS = {
  status: '/api/v1/status',
  drones: '/api/v1/drones',
  timeline: '/api/v1/timeline',
  timelineSvg: '/timeline.svg',
  metrics: '/metrics',
} as const;

export function buildHttp(deps: HttpDeps): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get(STATUS_PATHS.status, async () => deps.view());
  app.get(STATUS_PATHS.drones, async (req) => {
    const all = (req.query as { all?: string }).all === '1';
    return { drones: deps.view(all).drones };
  });
  app.get(`${STATUS_PATHS.drones}/:id`, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const drone = deps.view(true).drones.find((d) => d.id === id);
    if (!drone) return reply.code(404).send({ error: `no drone ${id}` });
    return { drone, transitions: deps.registry.transitions(id) };
  });
  app.get(STATUS_PATHS.timeline, async () => ({ points: deps.timeline() }));
  app.get(STATUS_PATHS.timelineSvg, async (_req, reply) => reply.type('image/svg+xml').send(timelineSvg(deps.timeline())));
  app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(renderPage(deps.view())));
  app.get(STATUS_PATHS.metrics, async (_req, reply) =>
    reply.type(deps.metrics.contentType).send(await deps.metrics.metrics()),
  );
  return app;
}
