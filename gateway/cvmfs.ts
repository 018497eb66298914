// CVMFS URL layout (see docs/CVMFS.md): /cvmfs/<repository>/<path>. Content-addressed objects
// live under data/XX/YYYY…, named by the hash of their bytes as transferred, so the gateway can
// check every one before it is stored. Pure.

import { createHash, type Hash } from 'node:crypto';

export type CvmfsKind = 'data' | 'manifest' | 'geo' | 'other';

export interface CvmfsPath {
  readonly repo: string;
  readonly kind: CvmfsKind;
  /** For data objects: the algorithm and hex digest their bytes must hash to. */
  readonly hash?: { readonly algorithm: HashAlgorithm; readonly hex: string };
}

export type HashAlgorithm = 'sha1' | 'rmd160' | 'shake128';

/** Every CVMFS hash is 160 bits (SHA-1, RIPEMD-160, and SHAKE-128 truncated to 160 bits). */
const HEX_DIGITS = 40;

const MANIFESTS = new Set([
  '.cvmfspublished',
  '.cvmfswhitelist',
  '.cvmfswhitelist.pkcs7',
  '.cvmfs_master_replica',
  '.cvmfs_last_snapshot',
  '.cvmfs_status.json',
]);

const DATA = /^data\/([0-9a-f]{2})\/([0-9a-f]+)(-rmd160|-shake128)?([A-Z])?$/;

/** Classifies a URL path; undefined when it is not under /cvmfs/<repo>/. */
export function classifyCvmfs(pathname: string): CvmfsPath | undefined {
  const m = /^\/cvmfs\/([^/]+)\/(.*)$/.exec(pathname);
  if (!m) return undefined;
  const repo = m[1]!;
  const rest = m[2]!;
  if (repo === 'info') return { repo, kind: 'manifest' };
  const d = DATA.exec(rest);
  if (d) {
    const hex = d[1]! + d[2]!;
    if (hex.length !== HEX_DIGITS) return { repo, kind: 'other' };
    const algorithm: HashAlgorithm =
      d[3] === '-rmd160' ? 'rmd160' : d[3] === '-shake128' ? 'shake128' : 'sha1';
    return { repo, kind: 'data', hash: { algorithm, hex } };
  }
  if (MANIFESTS.has(rest)) return { repo, kind: 'manifest' };
  if (rest.startsWith('api/v1.0/geo/')) return { repo, kind: 'geo' };
  return { repo, kind: 'other' };
}

export function newHasher(algorithm: HashAlgorithm): Hash {
  if (algorithm === 'shake128') return createHash('shake128', { outputLength: HEX_DIGITS / 2 });
  return createHash(algorithm === 'rmd160' ? 'ripemd160' : 'sha1');
}

/** One-shot check, for tests and small objects. */
export function verifyContent(algorithm: HashAlgorithm, hex: string, body: Uint8Array): boolean {
  return newHasher(algorithm).update(body).digest('hex') === hex;
}
