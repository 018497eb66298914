// Where `estuary mount` finds its store without --endpoint, and what it refuses, as
// docs/SEMANTICS.md ("Which store, which region, which keys") says: AWS_ENDPOINT_URL and the shared
// config's endpoint_url, the profile's region, and FIPS with an endpoint URL refused before
// anything else is asked.

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isMounted } from '../../fuse/mount-table.ts';
import { onTeardown, runTeardowns } from '../helpers/cleanup.ts';
import { startS3rver } from '../helpers/s3rver.ts';
import { tempDir } from '../helpers/tmp.ts';
import { fuseAvailable, runEstuary, sh } from './mount-helpers.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();

/** The environment of a mount with keys and nothing else of AWS's: HOME points at `home`. */
function bareEnv(home: string, more: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
  return { ...env, ...more };
}

describe.skipIf(!fuse.ok)('estuary mount without --endpoint', () => {
  it('mounts the store AWS_ENDPOINT_URL names, and the one the profile endpoint_url names', async () => {
    const server = await startS3rver({ buckets: ['envstore'] });
    const home = await tempDir('estuary-home-');
    await writeFile(join(home, 'config'), `[profile lab]\nregion = eu-west-1\nendpoint_url = ${server.endpoint}\n`);
    for (const more of [{ AWS_ENDPOINT_URL: server.endpoint }, { AWS_CONFIG_FILE: join(home, 'config'), AWS_PROFILE: 'lab' }]) {
      const dir = await tempDir('estuary-mnt-');
      const child = runEstuary(['mount', 'envstore', dir, '--log-format', 'json'], bareEnv(home, more));
      onTeardown(async () => {
        if (await isMounted(dir)) await sh(`fusermount -uz '${dir}' || umount -l '${dir}'`);
        await child.stop('SIGKILL');
      });
      await child.waitFor(/"msg":"mounted /, 30_000);
      expect(child.output()).toContain(`(${Object.keys(more)[0] === 'AWS_ENDPOINT_URL' ? 'AWS_ENDPOINT_URL' : 'endpoint_url of AWS profile \\"lab\\"'})`);
      await writeFile(join(dir, 'hello'), 'from the environment');
      expect(await readFile(join(dir, 'hello'), 'utf8')).toBe('from the environment');
      await child.stop('SIGTERM');
    }
  }, 60_000);

  it('refuses FIPS together with an endpoint URL in one line, exit 2, before asking anything', async () => {
    const home = await tempDir('estuary-home-');
    const dir = await tempDir('estuary-mnt-');
    // Port 9 (discard) on loopback: nothing answers, and nothing must be asked.
    const child = runEstuary(['mount', 'kek', dir, '--endpoint', 'http://127.0.0.1:9'], bareEnv(home, { AWS_USE_FIPS_ENDPOINT: 'true' }));
    expect(await child.exited).toBe(2);
    expect(child.output().trim()).toBe(
      "estuary: FIPS endpoints are AWS's own, and --endpoint names another; unset AWS_USE_FIPS_ENDPOINT (use_fips_endpoint) or the endpoint",
    );
  }, 30_000);
});
