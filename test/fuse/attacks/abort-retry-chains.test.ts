// docs/SEMANTICS.md, "Unfinished multipart uploads": an abort the server did not take "is tried
// again every 30 s for 10 minutes and once more at unmount, and only then left, with a warning".
// One chain of rounds: an abort that fails while a round runs (rounds are slow exactly when the
// server is) waits for the next round, and no upload is tried twice at once, given up early or
// warned about twice. (Through a mount this needs minutes; here the class the mount uses runs
// with 100 ms rounds against a store that fails one upload's aborts after 150 ms and another's at
// once.)

import { describe, expect, it } from 'vitest';
import { LateAborts } from '../../../fuse/fs/late-aborts.ts';
import { ObjectError, type ObjectClient } from '../../../fuse/s3/object-client.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rounds of tries of aborts the server did not take', () => {
  it('one chain of rounds: each upload tried 1 + tries times, never twice at once, warned about once', async () => {
    const tries = new Map<string, number>();
    const running = new Map<string, number>();
    let overlapping = 0;
    const client = {
      async abortMultipart(_key: string, uploadId: string) {
        tries.set(uploadId, (tries.get(uploadId) ?? 0) + 1);
        running.set(uploadId, (running.get(uploadId) ?? 0) + 1);
        if (running.get(uploadId)! > 1) overlapping++;
        await sleep(uploadId === 'A' ? 150 : 10);
        running.set(uploadId, running.get(uploadId)! - 1);
        throw new ObjectError('unavailable', 'no answer in time', _key);
      },
    } as unknown as ObjectClient;
    const warned: string[] = [];
    const log = { warn: (o: object) => warned.push((o as { uploadId: string }).uploadId) };
    const ROUNDS = 4;
    const late = new LateAborts(client, log, 100, ROUNDS);
    await late.abort('a', 'A'); // fails: pending, first round at +100 ms
    await sleep(110); // the first round is running (its try of A lasts 150 ms)...
    await late.abort('b', 'B'); // ...when B's abort fails too (at once)
    await sleep(3000); // far more than 1 + ROUNDS rounds
    const state = { tries: Object.fromEntries(tries), overlapping, warned, pending: late.size };
    expect(state).toEqual({ tries: { A: 1 + ROUNDS, B: 1 + ROUNDS }, overlapping: 0, warned: ['A', 'B'], pending: 0 });
  }, 20_000);
});
