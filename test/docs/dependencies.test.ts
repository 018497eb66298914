// docs/DEPENDENCIES.md names the version of each hot-path dependency and the open bugs of that
// line. The versions must be the ones installed, or the page describes bugs of another release.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const doc = readFileSync(new URL('docs/DEPENDENCIES.md', root), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  dependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
};

/** Rows of the first table: package name and version. */
function rows(): [string, string][] {
  return [...doc.matchAll(/^\| ([@\w/.-]+) \| (\d+\.\d+\.\d+) \|/gm)].map((m) => [m[1]!, m[2]!]);
}

function installed(name: string): string {
  return (JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, root), 'utf8')) as { version: string })
    .version;
}

describe('docs/DEPENDENCIES.md', () => {
  it('lists undici, fastify, fuse-native, amqplib and the AWS SDK clients', () => {
    expect(rows().map(([name]) => name)).toEqual(
      expect.arrayContaining(['undici', 'fastify', 'fuse-native', 'amqplib', '@aws-sdk/client-s3', '@aws-sdk/client-ec2']),
    );
  });

  it.each(rows())('names the installed version of %s', (name, version) => {
    const declared = pkg.dependencies[name] ?? pkg.optionalDependencies[name];
    expect(declared, `${name} is not a dependency (or optional dependency) in package.json`).toBeDefined();
    expect(installed(name)).toBe(version);
    // Each package's own section repeats the version it speaks about.
    expect(doc).toMatch(new RegExp(`^## .*${name.replace(/[/.]/g, '\\$&')}.* ${version.replace(/\./g, '\\.')}`, 'm'));
  });

  it('undici is pinned exactly, as the page says', () => {
    expect(pkg.dependencies.undici).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
