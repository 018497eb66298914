// The write-back journal's pure rules (fuse/fs/journal-record.ts): what a name in its folder is,
// which records are read, their order, and one store however it is spelled.

import { describe, expect, it } from 'vitest';
import {
  byAge,
  type JournalRecord,
  journalFile,
  parseRecord,
  sameStore,
  storeIdentity,
} from '../../../fuse/fs/journal-record.ts';

const ID = 'mifz3k2a-0b6e3c1e-8f0a-4c1e-9a51-3b2f7d0c9e11';
const record = (over: Partial<JournalRecord> = {}) =>
  JSON.stringify({ version: 1, id: ID, key: 'run42/a.txt', size: 3, options: {}, createdMs: 1, seq: 0, ...over });

describe('journal folder names', () => {
  it('knows its own files and nothing else', () => {
    expect(journalFile(`${ID}.json`)).toEqual({ kind: 'entry', id: ID, record: true, tmp: false });
    expect(journalFile(`${ID}.data`)).toEqual({ kind: 'entry', id: ID, record: false, tmp: false });
    expect(journalFile(`${ID}.json.tmp`)).toEqual({ kind: 'entry', id: ID, record: true, tmp: true });
    for (const n of ['lock', 'lock.lock', 'lock.pid', 'lock.lock-journal', 'lock.pid.123']) expect(journalFile(n).kind).toBe('lock');
    expect(journalFile('identity').kind).toBe('identity');
    for (const n of ['x.json', 'evil.data', '2026-11-24.txt', `${ID}.json.bak`, `../${ID}.json`, 'notes'])
      expect(journalFile(n).kind, n).toBe('foreign');
  });
});

describe('journal records', () => {
  it('reads a record the journal wrote, for a mount of its prefix', () => {
    expect(parseRecord(`${ID}.json`, record(), 'run42')).toMatchObject({ key: 'run42/a.txt', seq: 0 });
    expect(parseRecord(`${ID}.json`, record(), 'run42/')).toMatchObject({ key: 'run42/a.txt' });
    expect(parseRecord(`${ID}.json`, record({ seq: undefined }), '')).toMatchObject({ key: 'run42/a.txt' });
  });

  it('says why it cannot use a damaged record, a newer release\'s, or one outside the prefix', () => {
    expect(parseRecord(`${ID}.json`, '{"version":1,"id":"trunc', '')).toMatch(/not a complete record/);
    expect(parseRecord(`${ID}.json`, record({ version: 2 }), '')).toMatch(/format version 2.*newer release/);
    expect(parseRecord(`${ID}.json`, record({ id: '../../etc/x' }), '')).toMatch(/id inside it is not its file name/);
    expect(parseRecord(`${ID}.json`, record({ key: 'elsewhere/planted.txt' }), 'run42')).toMatch(
      /key "elsewhere\/planted.txt" is not under this mount's prefix "run42\/"/,
    );
    // `run420/` is not under `run42/`.
    expect(parseRecord(`${ID}.json`, record({ key: 'run420/x' }), 'run42')).toMatch(/not under/);
    expect(parseRecord(`${ID}.json`, record({ size: -1 }), '')).toMatch(/size/);
    expect(parseRecord(`${ID}.json`, 'null', '')).toMatch(/not a record/);
  });
});

describe('journal order', () => {
  const r = (seq: number | undefined, createdMs: number) => ({ seq, createdMs }) as JournalRecord;

  it('goes by seq, never by the clock', () => {
    const sorted = [r(2, 5), r(0, 9), r(1, 9)].sort(byAge);
    expect(sorted.map((x) => x.seq)).toEqual([0, 1, 2]);
  });

  it("puts an older release's records (no seq) first, by their clock", () => {
    const sorted = [r(0, 1), r(undefined, 50), r(undefined, 10)].sort(byAge);
    expect(sorted.map((x) => x.createdMs)).toEqual([10, 50, 1]);
  });
});

describe('store identity', () => {
  it('is one store however the prefix or the endpoint is spelled', () => {
    const typed = storeIdentity('http://127.0.0.1:9000', 'kek', 'run42');
    expect(typed).toEqual({ endpoint: 'http://127.0.0.1:9000', bucket: 'kek', prefix: 'run42' });
    for (const p of ['run42/', '/run42', 'run42//']) expect(storeIdentity('http://127.0.0.1:9000/', 'kek', p)).toEqual(typed);
    expect(storeIdentity('HTTP://LocalHost:9000/s3/', 'kek', '')).toEqual({ endpoint: 'http://localhost:9000/s3', bucket: 'kek', prefix: '' });
    expect(storeIdentity(undefined, 'kek', '').endpoint).toBe('aws');
  });

  it('takes an identity recorded as typed for the same store, and no other', () => {
    const recorded = { endpoint: 'http://H:9000/', bucket: 'kek', prefix: 'run42/' };
    expect(sameStore(recorded, storeIdentity('http://h:9000', 'kek', 'run42'))).toBe(true);
    expect(sameStore(recorded, storeIdentity('http://h:9001', 'kek', 'run42'))).toBe(false);
    expect(sameStore(recorded, storeIdentity('http://h:9000', 'kek', 'run4'))).toBe(false);
    expect(sameStore({ endpoint: 'aws', bucket: 'kek', prefix: '' }, storeIdentity(undefined, 'kek', '/'))).toBe(true);
  });
});
