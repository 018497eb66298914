// Packages that only one feature needs are optionalDependencies in package.json: the GeoLite city
// database and its reader (discovery's IP locations), the EC2 SDK (the coordinator's `ec2` sites)
// and s3rver (the bench's default local S3 server). A worker node installs without them
// (`npm ci --omit=dev --omit=optional`). The feature that needs one loads it through
// optionalPackage(), never with a static import, so every other command runs without it; when it
// is missing, or half installed (its package.json there, its files not: an interrupted `npm ci`),
// the command ends with one line naming the package and how to install it (exit 2).
// test/cli/footprint.test.ts reads the source to keep it so.

import { fileURLToPath } from 'node:url';
import { type CodeDoc, type EstuaryError, errorsOf } from './errors.ts';

/** The directory `npm ci` ran in: package.json is there. */
const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

/** The code's row in docs/ERRORS.md. */
export const MISSING_PACKAGE_CODES = {
  ESTUARY_MISSING_PACKAGE: {
    meaning:
      'a feature needs an npm package the install left out: the GeoLite database or `maxmind` (`discovery` without `--geo-db none`), `@aws-sdk/client-ec2` (`coordinator` with an `ec2` site) or `s3rver` (`bench` on its local S3 server), after `npm ci --omit=optional` (exit 2)',
    fix: 'run `npm ci --omit=dev` in the directory the message names, or use the alternative it gives; README.md, "What each role needs"',
  },
} satisfies Record<string, CodeDoc>;

/** What needs a package, and what else would do without it. */
export interface Need {
  /** Such as "discovery's IP database". */
  readonly feature: string;
  /** Such as "give --geo-db none". */
  readonly instead?: string;
}

export function missingPackage(pkg: string, need: Need): EstuaryError {
  return errorsOf(MISSING_PACKAGE_CODES)(
    'ESTUARY_MISSING_PACKAGE',
    `${need.feature} needs the npm package ${pkg}, which this install left out (npm ci --omit=optional); ` +
      `run \`npm ci --omit=dev\` in ${PACKAGE_ROOT} to install it${need.instead ? `, or ${need.instead}` : ''}`,
    { exitCode: 2 },
  );
}

/** The package a "cannot find" error of import() or require() names, if it names one. */
export function missingPackageOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  // import(): "Cannot find package 'maxmind' imported from …"; require(): "Cannot find module 'x/package.json'".
  const message = (err as Error).message;
  const m = /Cannot find (?:package|module) '((?:@[^/']+\/)?[^/'.][^/']*)/.exec(message);
  if (m) return m[1];
  // A package half installed (an interrupted `npm ci`: its package.json there, its main file not):
  // "Cannot find package '/…/node_modules/maxmind/lib/index.js' imported from …" (require(): module).
  const file = /Cannot find (?:package|module) '[^']*\/node_modules\/((?:@[^/']+\/)?[^/'.][^/']*)\/[^']*'/.exec(message);
  return file?.[1];
}

function rethrow(err: unknown, pkg: string, need: Need): never {
  throw missingPackageOf(err) === pkg ? missingPackage(pkg, need) : err;
}

/** What `load` (a dynamic import of `pkg`) answers, or the one-line error when `pkg` is not installed. */
export async function optionalPackage<T>(pkg: string, need: Need, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    return rethrow(err, pkg, need);
  }
}

/** As optionalPackage(), for a synchronous load such as a require.resolve of a file of `pkg`. */
export function optionalPackageSync<T>(pkg: string, need: Need, load: () => T): T {
  try {
    return load();
  } catch (err) {
    return rethrow(err, pkg, need);
  }
}
