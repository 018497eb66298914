// Attacks on run-time learning (docs/COORDINATOR.md "Run times"): sacct's text is hostile input,
// "every user names their jobs". A user must only ever move the estimates of their OWN jobs.
import { describe, expect, it } from 'vitest';
import { parseSacct } from '../../../coordinator/batch/sacct-parse.ts';
import { estimateRunTime, MAX_KEYS, RunTimeHistory } from '../../../coordinator/run-times.ts';

const P = ['batch'];

describe('sacct job names cannot forge other users records', () => {
  // `sbatch --job-name=$'x\n900001|COMPLETED|1|alice|batch|train'` run by mallory: sacct prints the
  // name raw, so the line after the newline looks exactly like a record of alice's. The docs say a
  // name with a newline "leaves two such lines" that are skipped and counted; here the second line
  // is a well-formed record and is learned as alice's. Expected: nothing mallory names can add a
  // record for alice (or any other user), so alice's `train` jobs keep their own estimate.
  it('a newline in mallory\'s job name does not add a finished job of alice', () => {
    const forged = [1, 2, 3].map((i) => `9000${i}|COMPLETED|1|alice|batch|train|9000${i}`);
    const text = [
      `500|COMPLETED|3600|alice|batch|train|500`,
      ...[1, 2, 3].map((i) => `60${i}|COMPLETED|5|mallory|batch|x\n${forged[i - 1]}|60${i}`),
    ].join('\n');
    const read = parseSacct(text, P);
    expect(read.jobs.filter((j) => j.user === 'alice').map((j) => j.id)).toEqual(['500']);
  });

  it('three forged records do not make alice\'s 8 h jobs planned as 1 s (learning poisoning across users)', () => {
    const text = [1, 2, 3].map((i) => `60${i}|COMPLETED|5|mallory|batch|x\n9000${i}|COMPLETED|1|alice|batch|train|9000${i}|60${i}`).join('\n');
    const h = new RunTimeHistory();
    h.add(parseSacct(text, P).jobs);
    const e = estimateRunTime({ user: 'alice', partition: 'batch', name: 'train', timeLimitMs: 8 * 3600_000 }, h.summary(), 3600_000);
    // Alice never finished a job: her time limit is all there is to go by.
    expect(e).toEqual({ ms: 8 * 3600_000, source: 'time limit' });
  });

  // A forged record carries a job id of mallory's choosing: a job id that Slurm hands out later
  // (alice's real job 90001) is then "seen" and never learned. Expected: alice's real job counts.
  it('a forged job id does not make a later real job of that id be ignored', () => {
    const h = new RunTimeHistory();
    h.add(parseSacct(`601|COMPLETED|5|mallory|batch|x\n90001|COMPLETED|1|alice|batch|train|90001|601`, P).jobs);
    const before = h.size;
    h.add(parseSacct(`90001|COMPLETED|7200|alice|batch|train|90001`, P).jobs);
    expect(h.size).toBe(before + 1);
  });
});

describe('one user cannot evict everyone else\'s learned run times', () => {
  // MAX_KEYS distinct keys are kept, the least recently seen go first. Mallory submits 10 000
  // trivial jobs with distinct names (a loop of sbatch, or names forged as above): every other
  // user's history is dropped and their jobs fall back to time limits. Expected: a user's
  // one-off names evict that user's own keys, not other users' (or a per-user bound).
  it('alice\'s learned estimate survives mallory\'s 10 000 distinct job names', () => {
    const h = new RunTimeHistory();
    h.add([1, 2, 3].map((i) => ({ id: `a${i}`, user: 'alice', partition: 'batch', name: 'train', elapsedMs: 600_000 })));
    const flood = [];
    for (let i = 0; i < MAX_KEYS; i++) flood.push({ id: `m${i}`, user: 'mallory', partition: 'batch', name: `junk-${i}`, elapsedMs: 1000 });
    h.add(flood);
    const e = estimateRunTime({ user: 'alice', partition: 'batch', name: 'train', timeLimitMs: 8 * 3600_000 }, h.summary(), 3600_000);
    expect(e.source).toBe('learned');
    expect(e.ms).toBe(600_000);
  });
});
