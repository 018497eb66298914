// The on-disk entry format, version 1. One file per stored response:
//
//   body bytes | metadata JSON (UTF-8) | metadata length (uint32 BE) | magic "ESTUARY1"
//
// The body comes first so a fill can stream it to disk before the headers are final and readers
// can tail the file from offset 0. The trailer is written last, after the whole body, and the
// file only reaches its final name after fsync + rename, so a file without a valid trailer (a
// crash mid-write, a truncated copy) is never taken for an entry. A new layout gets a new magic
// and a new directory (v2/), so old and new gateways never misread each other's files. Pure.

import type { EntryMeta } from './entry.ts';

export const FORMAT_VERSION = 1;
export const MAGIC = Buffer.from('ESTUARY1', 'latin1');
export const TRAILER_FIXED = 4 + MAGIC.length;
/** Metadata above this is refused: headers are bounded far below it, so larger means corruption. */
export const MAX_META_BYTES = 1 << 20;

/** The file system's block: an entry's file takes whole blocks, however small its body. */
export const DISK_BLOCK = 4096;

/** What a file of `fileBytes` takes on disk, in whole blocks. */
export function diskCharge(fileBytes: number): number {
  return Math.max(1, Math.ceil(fileBytes / DISK_BLOCK)) * DISK_BLOCK;
}

/**
 * What the disk tier's index holds in memory for one entry beyond its metadata's own characters
 * (the map's slots, the entry and metadata objects, the file's path), measured with Node 24: about
 * 520 bytes, and the metadata's strings about their length in JSON.
 */
const INDEX_ENTRY_BYTES = 512;
/**
 * An entry is charged against --disk-cache at least this many times what its index entry holds in
 * memory. For ordinary URLs that is about one block, so nothing changes; an entry under a 15 KiB
 * URL holds 30 KiB of memory in every worker, and without this weight a cache of empty bodies under
 * long URLs would hold about as much memory as --disk-cache allows on disk.
 */
const INDEX_WEIGHT = 4;

/**
 * What one header field beyond the first FREE_FIELDS holds in memory besides its JSON characters,
 * measured with Node 24: an object with many properties is a hash table (three slots per field,
 * at up to twice the fields), each key and value a string object of its own, and field names an
 * origin makes unique per response a hidden class of their own; 60 to 110 bytes per field in all.
 * The first fields are in INDEX_ENTRY_BYTES: an ordinary response's dozen fields share hidden
 * classes and cost about their JSON. An origin may send 16 KiB of head in 1,400 short fields,
 * which without this would hold five times what the index says.
 */
const FIELD_BYTES = 112;
const FREE_FIELDS = 16;

function fieldCount(headers: EntryMeta['headers']): number {
  let n = 0;
  for (const v of Object.values(headers)) n += Array.isArray(v) ? v.length + 1 : 1;
  return n;
}

/** The length of the entry's file and what its index entry holds in memory. */
export interface DiskFootprint {
  readonly fileBytes: number;
  readonly indexBytes: number;
}

export function footprintOf(meta: EntryMeta, metaBytes = Buffer.byteLength(JSON.stringify(meta), 'utf8')): DiskFootprint {
  const fields = Math.max(0, fieldCount(meta.headers) - FREE_FIELDS);
  return { fileBytes: meta.size + metaBytes + TRAILER_FIXED, indexBytes: metaBytes + INDEX_ENTRY_BYTES + FIELD_BYTES * fields };
}

/** What an entry counts against --disk-cache: its file in whole blocks, or its weighted memory. */
export function chargeOf(f: DiskFootprint): number {
  return Math.max(diskCharge(f.fileBytes), INDEX_WEIGHT * f.indexBytes);
}

export function encodeTrailer(meta: EntryMeta): Buffer {
  const json = Buffer.from(JSON.stringify(meta), 'utf8');
  const out = Buffer.allocUnsafe(json.length + TRAILER_FIXED);
  json.copy(out, 0);
  out.writeUInt32BE(json.length, json.length);
  MAGIC.copy(out, json.length + 4);
  return out;
}

/** Reads the fixed tail; returns the metadata length, or undefined when the magic is wrong. */
export function decodeTail(tail: Buffer): number | undefined {
  if (tail.length !== TRAILER_FIXED) return undefined;
  if (!tail.subarray(4).equals(MAGIC)) return undefined;
  const len = tail.readUInt32BE(0);
  return len > 0 && len <= MAX_META_BYTES ? len : undefined;
}

/** Parses the metadata and checks it against the file size; undefined when anything is off. */
export function decodeMeta(json: Buffer, fileSize: number): EntryMeta | undefined {
  let meta: EntryMeta;
  try {
    meta = JSON.parse(json.toString('utf8')) as EntryMeta;
  } catch {
    return undefined;
  }
  if (!wellFormed(meta)) return undefined;
  if (meta.size + json.length + TRAILER_FIXED !== fileSize) return undefined;
  return meta;
}

/** A header field name (RFC 9110 token) and a value a response can carry (no CR, LF or NUL). */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;
const FIELD_VALUE = /^[^\r\n\0]*$/;

function isFieldValue(v: unknown): boolean {
  return typeof v === 'string' && FIELD_VALUE.test(v);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optional(v: unknown, type: 'string' | 'number' | 'boolean'): boolean {
  return v === undefined || typeof v === type;
}

/**
 * Whether parsed metadata has every field a response is built from, of the right type: a damaged
 * trailer that is still valid JSON must be discarded at start-up like any other, not answered 500
 * (or with an injected header) on every hit.
 */
export function wellFormed(m: unknown): m is EntryMeta {
  if (!isRecord(m)) return false;
  if (typeof m.key !== 'string' || typeof m.url !== 'string') return false;
  if (!Number.isInteger(m.status) || (m.status as number) < 100 || (m.status as number) > 599) return false;
  if (!Number.isSafeInteger(m.size) || (m.size as number) < 0) return false;
  if (!Number.isFinite(m.requestTime) || !Number.isFinite(m.responseTime)) return false;
  if (!isRecord(m.headers)) return false;
  for (const [name, value] of Object.entries(m.headers)) {
    if (!FIELD_NAME.test(name)) return false;
    if (Array.isArray(value) ? !value.every(isFieldValue) : !isFieldValue(value)) return false;
  }
  if (m.vary !== undefined && (!isRecord(m.vary) || !Object.values(m.vary).every((v) => typeof v === 'string'))) return false;
  if (!optional(m.directives, 'string') || !optional(m.repo, 'string')) return false;
  return optional(m.immutable, 'boolean') && optional(m.lifetimeS, 'number');
}
