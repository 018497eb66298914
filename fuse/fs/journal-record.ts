// What the write-back journal's folder holds, and how its records are read and ordered: pure
// logic, no I/O (journal.ts does the reading and writing).
//
// A record is read only if everything in it is what the journal itself writes: its id is its file
// name (the id names the data file, so a record cannot point outside the folder), its key lies
// under the mount's prefix (a record can never make the mount write elsewhere in the bucket), and
// its version is one this release knows.

import type { WriteOptions } from '../s3/object-client.ts';
import { maskUserinfo, withoutUserinfo } from '../endpoint-address.ts';
import { normalisePrefix } from './keys.ts';

/**
 * The on-disk record format carries its version, so a later layout can read or refuse old ones.
 * `seq` was added within version 1: older releases ignore it, and their records, which lack it,
 * are all older than any that has it.
 */
export const RECORD_VERSION = 1;

export interface JournalRecord {
  readonly version: number;
  readonly id: string;
  readonly key: string;
  readonly size: number;
  readonly options: WriteOptions;
  /** The wall clock at close(): shown as the file's times, never used for order. */
  readonly createdMs: number;
  /**
   * Order of the closes that made the entries, counted up by the journal's owner (and on from the
   * highest left in the folder at start): the clock may stand still between two closes or step
   * back (NTP, a resumed VM), and the entry of the last close() to return must win.
   */
  readonly seq?: number;
}

/** Which store a journal's files belong to: they are uploaded there and nowhere else. */
export interface JournalIdentity {
  /** The S3 endpoint (`--endpoint`, normalised: see storeIdentity), or `aws` for AWS's own. */
  readonly endpoint: string;
  readonly bucket: string;
  /** The key prefix without slashes at either end (`run42` for `run42/` too), or ''. */
  readonly prefix: string;
}

/**
 * The identity of a store as the journal records it and its default folder is named: one store
 * however it is spelled. `kek/run42`, `kek/run42/` and `kek//run42` mount the same keys, and
 * `HTTP://Host:9000/` is `http://host:9000`. The forms are those the common spellings
 * (`kek/run42`, `http://host:9000`) always had, so journals made before keep their folder.
 */
export function storeIdentity(endpoint: string | undefined, bucket: string, prefix: string): JournalIdentity {
  return { endpoint: endpoint === undefined ? 'aws' : normaliseEndpoint(endpoint), bucket, prefix: canonicalPrefix(prefix) };
}

/** A user name or password in the endpoint is no part of the store (S3 never reads them). */
function normaliseEndpoint(endpoint: string): string {
  const bare = withoutUserinfo(endpoint);
  try {
    return new URL(bare).href.replace(/\/+$/, '');
  } catch {
    return bare.replace(/\/+$/, '');
  }
}

const canonicalPrefix = (prefix: string) => normalisePrefix(prefix).replace(/\/$/, '');

/** Whether two identities (one possibly written by an older release, as typed) name one store. */
export function sameStore(a: JournalIdentity, b: JournalIdentity): boolean {
  const x = storeIdentity(a.endpoint === 'aws' ? undefined : a.endpoint, a.bucket, a.prefix);
  const y = storeIdentity(b.endpoint === 'aws' ? undefined : b.endpoint, b.bucket, b.prefix);
  return x.endpoint === y.endpoint && x.bucket === y.bucket && x.prefix === y.prefix;
}

export const describeIdentity = (i: JournalIdentity): string =>
  `bucket "${i.bucket}"${i.prefix ? ` prefix "${i.prefix}"` : ''} at ${maskUserinfo(i.endpoint)}`;

/** The journal's lock: `lock.lock`, its `lock.pid` and SQLite's `lock.lock-journal` beside it. */
export const LOCK_NAME = 'lock';
/** What older releases locked with: a file holding the owner's PID. */
export const LEGACY_LOCK_FILE = 'lock';
/** The journal's own metadata: the identity of the store its files belong to. */
export const IDENTITY_FILE = 'identity';

/** An entry's id, as add() makes it: the clock in base 36 and a random UUID. */
const ENTRY = /^([0-9a-z]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(data|json)(\.tmp)?$/;

export type JournalFile =
  | { readonly kind: 'lock' | 'identity' }
  | { readonly kind: 'entry'; readonly id: string; readonly record: boolean; readonly tmp: boolean }
  | { readonly kind: 'foreign' };

/** What a name in the journal folder is; anything `foreign` the journal did not write. */
export function journalFile(name: string): JournalFile {
  if (name === LEGACY_LOCK_FILE || name.startsWith(`${LOCK_NAME}.`)) return { kind: 'lock' };
  if (name === IDENTITY_FILE || name === `${IDENTITY_FILE}.tmp`) return { kind: 'identity' };
  const m = ENTRY.exec(name);
  if (!m) return { kind: 'foreign' };
  return { kind: 'entry', id: m[1]!, record: m[2] === 'json', tmp: m[3] !== undefined };
}

/**
 * The record in file `name` (`<id>.json`) with content `text`, for a mount of keys under
 * `prefix`; a string saying why it cannot be used otherwise.
 */
export function parseRecord(name: string, text: string, prefix: string | undefined): JournalRecord | string {
  let r: Partial<JournalRecord>;
  try {
    r = JSON.parse(text) as Partial<JournalRecord>;
  } catch (err) {
    return `it is not a complete record (${(err as Error).message})`;
  }
  if (typeof r !== 'object' || r === null) return 'it is not a record';
  if (r.version !== RECORD_VERSION)
    return `it has format version ${JSON.stringify(r.version)}, which this release does not know (a newer release wrote it: mount with that release to upload it)`;
  if (`${r.id}.json` !== name) return 'the id inside it is not its file name';
  if (typeof r.key !== 'string' || r.key === '') return 'it names no key';
  if (!Number.isSafeInteger(r.size) || r.size! < 0) return 'it has no valid size';
  if (typeof r.createdMs !== 'number' || (r.seq !== undefined && !Number.isSafeInteger(r.seq)))
    return 'its time or order is not a number';
  if (typeof r.options !== 'object' || r.options === null) return 'it has no valid options';
  const under = prefix === undefined ? '' : normalisePrefix(prefix);
  if (!r.key.startsWith(under))
    return `its key "${r.key}" is not under this mount's prefix "${under}"`;
  return r as JournalRecord;
}

/** Oldest first: records without `seq` (older releases') by their clock, then by `seq`. */
export function byAge(a: JournalRecord, b: JournalRecord): number {
  if (a.seq === undefined || b.seq === undefined) {
    if (a.seq !== b.seq) return a.seq === undefined ? -1 : 1;
    return a.createdMs - b.createdMs;
  }
  return a.seq - b.seq;
}
