// One drone's lifecycle as a pure step, after TARDIS's drone states: given what the site says of
// its instance and what the batch system says of its node, return the next state, the reason,
// and the side effects to perform. The caller persists the new state first and only then runs
// the actions, so a coordinator killed at any point finds, on restart, a state whose actions
// are safe to run again: every action is idempotent and each state re-issues its own each
// interval until the world agrees (a stop that was lost is simply sent again).

import type { Drone, DroneState, InstanceStatus, NodeView, Reason } from './model.ts';

export type Action =
  | 'deploy' // ask the site for the instance (idempotent by drone id)
  | 'integrate' // tell the batch system the node is wanted (Slurm: tag it, which wakes the scheduler)
  | 'drain' // no new jobs on the node
  | 'remove-node' // delete the node from the batch system (a lost node is set down first, so its jobs requeue)
  | 'stop'; // stop and delete the instance at the site

export interface Observation {
  readonly instance: InstanceStatus;
  readonly node: NodeView;
}

export interface Step {
  readonly state: DroneState;
  readonly reason: Reason;
  readonly lastBusyAt: number;
  readonly actions: readonly Action[];
}

export interface Timing {
  readonly bootTimeout: number;
}

const to = (d: Drone, state: DroneState, reason: Reason, actions: Action[] = [], lastBusyAt = d.lastBusyAt): Step => ({
  state,
  reason,
  actions,
  lastBusyAt,
});

const stay = (d: Drone, actions: Action[] = [], lastBusyAt = d.lastBusyAt): Step => ({
  state: d.state,
  reason: d.reason,
  actions,
  lastBusyAt,
});

/** What to do with one drone now. */
export function step(d: Drone, o: Observation, now: number, t: Timing): Step {
  const age = now - d.createdAt;
  const { instance, node } = o;
  const timedOut = () => to(d, 'error', { rule: 'boot-timeout', ageS: Math.round(age / 1000), limitS: t.bootTimeout / 1000 }, ['remove-node', 'stop']);
  // While the site cannot be asked, nothing is concluded about the instance.
  if (instance === 'unknown' && d.state !== 'available' && d.state !== 'draining') return stay(d);
  // Taken back before it ran a job: give it up at once and let a new drone take its place.
  if (instance === 'interrupting' && (d.state === 'requested' || d.state === 'unknown' || d.state === 'booting' || d.state === 'integrating'))
    return to(d, 'error', { rule: 'site-error', instance }, d.state === 'integrating' ? ['remove-node', 'stop'] : ['stop']);
  switch (d.state) {
    case 'requested':
      if (instance === 'booting') return to(d, 'booting', { rule: 'site-accepted' });
      if (instance === 'running') return to(d, 'integrating', { rule: 'instance-running' });
      if (instance === 'error' || instance === 'stopped') return to(d, 'error', { rule: 'site-error', instance }, ['stop']);
      if (age > t.bootTimeout) return timedOut();
      // Not at the site (a deploy cut short by a crash, or refused for now): ask again.
      return stay(d, ['deploy']);
    case 'unknown':
      // The deploy's answer never came, but the site may have done it (a cloud API that
      // timed out, a script slower than its timeout). Never deploy again (that could make a
      // second instance); ask the site by id until it shows the instance, or the boot timeout
      // says it never will. Meanwhile it counts against the quota like any live drone.
      if (instance === 'booting') return to(d, 'booting', { rule: 'deploy-confirmed' });
      if (instance === 'running') return to(d, 'integrating', { rule: 'deploy-confirmed' });
      if (instance === 'error' || instance === 'stopped') return to(d, 'error', { rule: 'site-error', instance }, ['stop']);
      if (age > t.bootTimeout)
        return to(d, 'error', { rule: 'deploy-unconfirmed', ageS: Math.round(age / 1000), limitS: t.bootTimeout / 1000 }, ['stop']);
      return stay(d);
    case 'booting':
      if (instance === 'running') return to(d, 'integrating', { rule: 'instance-running' });
      if (instance === 'deleted') return to(d, 'lost', { rule: 'instance-vanished' }, ['remove-node']);
      if (instance === 'error' || instance === 'stopped') return to(d, 'error', { rule: 'site-error', instance }, ['stop']);
      return age > t.bootTimeout ? timedOut() : stay(d);
    case 'integrating':
      if (instance === 'deleted') return to(d, 'lost', { rule: 'instance-vanished' }, ['remove-node']);
      if (instance === 'error' || instance === 'stopped') return to(d, 'error', { rule: 'site-error', instance }, ['remove-node', 'stop']);
      if (node.status === 'available') return to(d, 'available', { rule: 'node-joined', cpus: node.cpus }, ['integrate'], now);
      if (node.status === 'draining' || node.status === 'drained')
        return to(d, 'draining', { rule: 'drained-outside' }, [], now);
      return age > t.bootTimeout ? timedOut() : stay(d);
    case 'available': {
      const busyAt = node.allocCpus > 0 ? now : d.lastBusyAt;
      if (instance === 'deleted' || instance === 'error' || instance === 'stopped')
        return to(d, 'lost', { rule: 'instance-gone', instance }, ['remove-node', 'stop']);
      if (node.status === 'down' || node.status === 'absent')
        return to(d, 'lost', { rule: 'node-gone', node: node.status }, ['remove-node', 'stop']);
      // The site takes the instance back soon: no new jobs; running ones finish if time allows
      // (or are requeued by the batch system when the instance goes).
      if (instance === 'interrupting')
        return to(d, 'draining', { rule: 'interruption-notice' }, ['drain'], busyAt);
      // Drained by hand (scontrol update state=drain): honour it, as TARDIS honours a remote drain.
      if (node.status === 'draining' || node.status === 'drained')
        return to(d, 'draining', { rule: 'drained-outside' }, [], busyAt);
      return stay(d, [], busyAt);
    }
    case 'draining':
      if (instance === 'deleted') return to(d, 'lost', { rule: 'instance-vanished' }, ['remove-node']);
      if (node.status === 'down') return to(d, 'lost', { rule: 'node-gone', node: 'down' }, ['remove-node', 'stop']);
      if (node.status === 'absent' || (node.status === 'drained' && node.allocCpus === 0))
        return to(d, 'stopping', { rule: 'drained' }, ['remove-node', 'stop']);
      // Still taking jobs means the drain itself was lost (a restart in between): send it again.
      return stay(d, node.status === 'available' ? ['drain'] : []);
    case 'stopping':
    case 'error':
    case 'lost':
      if (instance === 'deleted' && node.status === 'absent')
        return to(d, 'down', { rule: 'released', from: d.state, after: d.reason.rule });
      return stay(d, [
        ...(node.status !== 'absent' ? (['remove-node'] as const) : []),
        ...(instance !== 'deleted' ? (['stop'] as const) : []),
      ]);
    case 'down':
      return stay(d);
  }
}

/** The state a release decision moves an available drone to, with the action it needs. */
export function release(d: Drone, reason: Reason): Step {
  return to(d, 'draining', reason, ['drain']);
}
