// The checksums S3 clients send with an upload (x-amz-checksum-<name>, as a header or an
// aws-chunked trailer), computed incrementally so a body can be checked as it streams through.
// CRC32 comes from zlib; CRC32C and CRC64NVME are table-driven here (both reflected CRCs, the
// parameters AWS documents for them); SHA-1 and SHA-256 from node:crypto. Pure.

import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';

export interface Checksum {
  update(data: Buffer): void;
  /** The big-endian digest, as S3 base64-encodes it. */
  digest(): Buffer;
}

/** Reflected CRC-32 table for `poly` (the bit-reversed polynomial). */
function table32(poly: number): Uint32Array {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ poly : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
}

// CRC-32C (Castagnoli), reflected polynomial 0x82F63B78.
const CRC32C = table32(0x82f63b78);

function crc32cChecksum(): Checksum {
  let c = 0xffffffff;
  return {
    update(data) {
      for (let i = 0; i < data.length; i++) c = CRC32C[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
    },
    digest() {
      const out = Buffer.alloc(4);
      out.writeUInt32BE((c ^ 0xffffffff) >>> 0);
      return out;
    },
  };
}

function crc32Checksum(): Checksum {
  let c = 0;
  return {
    update(data) {
      c = crc32(data, c);
    },
    digest() {
      const out = Buffer.alloc(4);
      out.writeUInt32BE(c >>> 0);
      return out;
    },
  };
}

// CRC-64/NVME, reflected polynomial 0x9A6C9329AC4BC9B5, held as two 32-bit halves so the inner
// loop stays in plain numbers (BigInt per byte is two orders of magnitude slower).
const NVME_POLY_HI = 0x9a6c9329;
const NVME_POLY_LO = 0xac4bc9b5;
const [NVME_HI, NVME_LO] = (() => {
  const hi = new Uint32Array(256);
  const lo = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let h = 0;
    let l = i;
    for (let k = 0; k < 8; k++) {
      const bit = l & 1;
      l = ((l >>> 1) | ((h & 1) << 31)) >>> 0;
      h = h >>> 1;
      if (bit) {
        h = (h ^ NVME_POLY_HI) >>> 0;
        l = (l ^ NVME_POLY_LO) >>> 0;
      }
    }
    hi[i] = h;
    lo[i] = l;
  }
  return [hi, lo];
})();

function crc64nvmeChecksum(): Checksum {
  let h = 0xffffffff;
  let l = 0xffffffff;
  return {
    update(data) {
      for (let i = 0; i < data.length; i++) {
        const idx = (l ^ data[i]!) & 0xff;
        l = (((l >>> 8) | ((h & 0xff) << 24)) ^ NVME_LO[idx]!) >>> 0;
        h = ((h >>> 8) ^ NVME_HI[idx]!) >>> 0;
      }
    },
    digest() {
      const out = Buffer.alloc(8);
      out.writeUInt32BE((h ^ 0xffffffff) >>> 0, 0);
      out.writeUInt32BE((l ^ 0xffffffff) >>> 0, 4);
      return out;
    },
  };
}

function hashChecksum(algorithm: 'sha1' | 'sha256'): Checksum {
  const h = createHash(algorithm);
  return {
    update(data) {
      h.update(data);
    },
    digest() {
      return h.digest();
    },
  };
}

const ALGORITHMS: Readonly<Record<string, () => Checksum>> = {
  'x-amz-checksum-crc32': crc32Checksum,
  'x-amz-checksum-crc32c': crc32cChecksum,
  'x-amz-checksum-crc64nvme': crc64nvmeChecksum,
  'x-amz-checksum-sha1': () => hashChecksum('sha1'),
  'x-amz-checksum-sha256': () => hashChecksum('sha256'),
};

/** The header names the gateway can check, for error messages. */
export const CHECKSUM_HEADERS: readonly string[] = Object.keys(ALGORITHMS);

/** A fresh checksum for a header name like `x-amz-checksum-crc32`, or undefined if unknown. */
export function checksumFor(header: string): Checksum | undefined {
  return ALGORITHMS[header.toLowerCase()]?.();
}
