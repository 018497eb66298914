// Steering around the home cluster: a job placed at home requires the home nodes alone, a job
// whose inputs are elsewhere is kept off them, and both are read back as this coordinator's own.

import { describe, expect, it } from 'vitest';
import type { PendingJob } from '../../coordinator/model.ts';
import { HOME_SITE, steerRequests, steering, unsteered } from '../../coordinator/steer.ts';

const job = (id: string, constraints: string[][] = []): PendingJob => ({ id, partition: 'p', cpus: 1, memoryMb: 1, constraints, inputs: [], submittedAt: 0, reason: 'Resources' });

describe('steering with the home cluster', () => {
  it('writes site_x|home, site_x alone when kept off home, and home alone for a job placed at home', () => {
    expect(steering('aws', 'home')).toBe('site_aws|home');
    expect(steering('aws', 'home', false)).toBe('site_aws');
    expect(steering(HOME_SITE, 'home')).toBe('home');
  });
  it('groups requests by site and by whether home is allowed', () => {
    const placed = new Map([['a', 'aws'], ['b', 'aws'], ['c', HOME_SITE]]);
    const reqs = steerRequests([job('a'), job('b'), job('c')], placed, 'home', new Set(['b']));
    expect(reqs.map((r) => [r.site, r.features, r.jobIds])).toEqual([
      ['aws', 'site_aws|home', ['a']],
      ['aws', 'site_aws', ['b']],
      [HOME_SITE, 'home', ['c']],
    ]);
  });
  it('leaves a job placed at home free when the home nodes carry no named feature', () => {
    expect(steerRequests([job('c')], new Map([['c', HOME_SITE]]), undefined)).toEqual([]);
  });
  it('reads its own home steering back, and not a user constraint that looks like it', () => {
    const steered = new Map([['c', HOME_SITE], ['b', 'aws']]);
    expect(unsteered(job('c', [['home']]), 'home', steered)).toMatchObject({ constraints: [], steeredTo: HOME_SITE });
    expect(unsteered(job('b', [['site_aws']]), 'home', steered)).toMatchObject({ constraints: [], steeredTo: 'aws' });
    expect(unsteered(job('x', [['home']]), 'home', steered).constraints).toEqual([['home']]);
  });
});
