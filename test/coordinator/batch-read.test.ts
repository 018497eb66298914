// "While the batch system cannot be read, nothing is started and nothing is stopped", for every
// way a read of Slurm 22.05 fails: the adapter is run against scripted squeue/sinfo (bin-dir)
// printing what 22.05 prints when slurmctld is down (exit 0, an `errors` array, empty lists),
// exiting non-zero, hanging past the timeout and printing garbage; the loop against the in-memory
// batch system for the node list that suddenly lacks every drone.

import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SlurmBatch } from '../../coordinator/batch/slurm.ts';
import { parseNodes, parseQueue } from '../../coordinator/batch/slurm-parse.ts';
import { ALL_GONE_BELIEVED_AFTER_MS, BatchReader } from '../../coordinator/batch-read.ts';
import { VirtualClock } from '../../coordinator/clock.ts';
import { batchSystemSchema } from '../../coordinator/config.ts';
import { job, makeWorld, run, states, type World } from './helpers/world.ts';

// Printed by squeue --json / sinfo --json 22.05.8 on this machine with no slurmctld listening.
const SQUEUE_DOWN = JSON.stringify({
  meta: { plugin: { type: 'openapi/v0.0.38' } },
  errors: [{ description: 'Failed while looking for jobs', error_number: -1, error: 'Unspecified error', source: 'slurm_load_jobs' }],
  jobs: [],
});
const SINFO_DOWN = JSON.stringify({ meta: {}, errors: [{ error: 'Unspecified error', errno: -1 }], nodes: [] });

describe('reading Slurm 22.05 when it cannot answer', () => {
  it('an errors array is a failed read, in Slurm\'s own words', () => {
    expect(() => parseQueue(SQUEUE_DOWN, ['hybrid'], 'es-')).toThrow('Failed while looking for jobs: Unspecified error: slurm_load_jobs (errno -1)');
    expect(() => parseNodes(SINFO_DOWN, 'es-')).toThrow('Unspecified error (errno -1)');
    expect(() => parseNodes('{"meta":{}}', 'es-')).toThrow('no "nodes" list');
    expect(() => parseQueue('squeue: error: x', ['hybrid'], 'es-')).toThrow('unparsable output');
    expect(parseNodes('{"errors":[],"nodes":[]}', 'es-').size).toBe(0);
  });

  const dir = mkdtempSync(join(tmpdir(), 'estuary-fake-slurm-'));
  const script = (name: string, body: string) => {
    writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, name), 0o755);
  };
  const adapter = () => new SlurmBatch(batchSystemSchema.parse({ type: 'slurm', partitions: ['hybrid'], binDir: dir, timeout: '1s' }) as never);

  it.each([
    ['exit 0 with an errors array', `echo '${SQUEUE_DOWN}'`, /slurm_load_jobs/],
    ['a non-zero exit', 'echo "squeue: error: slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2; exit 1', /Unable to contact slurm controller/],
    ['no answer within the timeout', 'exec sleep 5', /no answer in 1000 ms/],
    ['output that is not JSON', 'echo "Segmentation fault"', /unparsable output/],
  ])('the adapter fails the read on %s', async (_what, body, message) => {
    script('squeue', body);
    script('sinfo', `echo '${SINFO_DOWN}'`);
    await expect(adapter().queue('es-')).rejects.toThrow(message);
    await expect(adapter().nodes('es-')).rejects.toThrow(/ESTUARY_CO_BATCH|Unspecified error/);
  });

  it('reads the home cluster\'s cores from sinfo, so the policy weighs the home nodes under Slurm', async () => {
    script('squeue', `echo '{"errors":[],"jobs":[]}'`);
    script('sinfo', `echo '${JSON.stringify({ errors: [], nodes: [{ name: 'home1', state: 'mixed', cpus: 4, alloc_cpus: 3, real_memory: 8000, partitions: ['hybrid'] }] })}'`);
    const read = await new BatchReader(adapter(), 'es-', new VirtualClock(0)).read([]);
    expect(read.ok && read.queue.home).toEqual({ cores: 4, idleCores: 1, nodeCores: 4, nodeMemoryMb: 8000 });
  });
});

describe('the loop while the batch system cannot be read', () => {
  let worlds: World[] = [];
  afterEach(() => {
    for (const w of worlds) w.registry.close();
    worlds = [];
  });

  it('does not believe a node list that suddenly lacks every drone, for a minute', async () => {
    const w = makeWorld({ quota: 2, idleTime: 600_000 });
    worlds.push(w);
    w.batch.pending = [job('a', 2), job('b', 2)];
    await run(w, 7);
    expect(states(w)).toEqual({ 'es-cloud-1': 'available', 'es-cloud-2': 'available' });
    w.batch.hideNodes = true; // the controller answers, but has lost its drones' nodes
    await run(w, 30);
    expect(states(w)).toEqual({ 'es-cloud-1': 'available', 'es-cloud-2': 'available' });
    expect(w.site.instances.size).toBe(2);
    expect(w.coordinator.last!.batchHealthy).toBe(false);
    expect(w.coordinator.last!.batchError).toMatch(/lacks all 2 drone node/);
    w.batch.hideNodes = false; // it comes back: nothing happened
    await run(w, 2);
    expect(w.coordinator.last!.batchHealthy).toBe(true);
    expect(states(w)).toEqual({ 'es-cloud-1': 'available', 'es-cloud-2': 'available' });
    // Still true a minute later: believed, the drones are lost and replaced by demand.
    w.batch.hideNodes = true;
    await run(w, ALL_GONE_BELIEVED_AFTER_MS / 1000 + 2);
    expect(w.registry.transitions('es-cloud-1').map((t) => t.to)).toContain('lost');
  });

  it('freezes every drone, even one being drained, while reads fail', async () => {
    const w = makeWorld({ quota: 1, idleTime: 2000 });
    worlds.push(w);
    w.batch.pending = [job('a', 2)];
    await run(w, 7);
    w.batch.pending = [];
    await run(w, 2); // idle: released, draining
    expect(states(w)).toEqual({ 'es-cloud-1': 'draining' });
    w.batch.down = true;
    await run(w, 10);
    expect(states(w)).toEqual({ 'es-cloud-1': 'draining' });
    expect(w.site.instances.size).toBe(1);
    expect(w.coordinator.last!.batchError).toBe('slurmctld not responding');
  });
});
