// Keys no POSIX name can show, and keys that look like the names standing in for them, put into
// real stores (s3rver, Swift's s3api) directly through the SDK, then seen through the filesystem:
// every key is reachable under exactly one name, and no bad key hides its neighbours or fails
// their listing.

import { afterAll, describe, expect, it } from 'vitest';
import { toErrno } from '../../../fuse/fs/errno.ts';
import { standInName } from '../../../fuse/fs/keys.ts';
import type { ObjectClient } from '../../../fuse/s3/object-client.ts';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { startS3rver } from '../../helpers/s3rver.ts';
import { startSwift, swiftAvailable } from '../../helpers/swift.ts';
import { storeClient } from '../s3/client.ts';
import { makeFs, readFile } from './make-fs.ts';

afterAll(runTeardowns);

const swift = await swiftAvailable();

/** Each key's body is the key itself, so a read shows which key a name reached. */
async function check(client: ObjectClient, withDots: boolean): Promise<void> {
  const lookalike = `n/${standInName('n/..')}`;
  const keys = ['n/ok', 'n/ctl\x01a', 'n/esc\x1b[0m', lookalike, `n/${standInName('n/x')}/inside`];
  if (withDots) keys.push('n/..', 'n/../below');
  for (const k of keys) await client.put(k, Buffer.from(k));
  const fs = await makeFs(client);
  const entries = await fs.readdir('/n');
  const names = entries.map((e) => e.name);
  expect(new Set(names).size).toBe(names.length);
  const want = new Map<string, string>([
    ['ok', 'n/ok'],
    ['ctl\x01a', 'n/ctl\x01a'],
    ['esc\x1b[0m', 'n/esc\x1b[0m'],
    [standInName(lookalike), lookalike],
  ]);
  if (withDots) want.set(standInName('n/..'), 'n/..');
  for (const [name, key] of want) expect((await readFile(fs, `/n/${name}`)).toString(), name).toBe(key);
  // A prefix gets its own stand-in, apart from an object of the same key.
  const dir = standInName(`n/${standInName('n/x')}/`);
  expect(entries.find((e) => e.name === dir)?.attr.kind).toBe('dir');
  expect((await readFile(fs, `/n/${dir}/inside`)).toString()).toBe(`n/${standInName('n/x')}/inside`);
  if (withDots) {
    const dots = standInName('n/../');
    expect(entries.find((e) => e.name === dots)?.attr.kind).toBe('dir');
    expect((await fs.getattr(`/n/${standInName('n/..')}`)).kind).toBe('file');
    expect((await readFile(fs, `/n/${dots}/below`)).toString()).toBe('n/../below');
  }
  expect(names.length).toBe(want.size + 1 + (withDots ? 1 : 0));
  // The look-alike is reachable only under its own stand-in, and such names cannot be made.
  expect(await fs.getattr(lookalike.slice(1)).then(() => 'found', toErrno)).toBe('ENOENT');
  expect(await fs.create(`/n/${standInName('other')}`, 0o644).then(() => 'made', toErrno)).toBe('EINVAL');
  // A stand-in renames its key to a proper name.
  await fs.rename(`/n/${standInName(lookalike)}`, '/n/renamed');
  expect((await client.get('n/renamed')).toString()).toBe(lookalike);
}

describe('hostile keys', () => {
  it('are each reachable under one name on s3rver', async () => {
    const server = await startS3rver({ buckets: ['keys'] });
    // s3rver stores keys as file paths: `..` components cannot be stored there.
    await check(storeClient(server, 'keys'), false);
  });

  it.runIf(swift.ok)('are each reachable under one name on Swift, `..` included', async () => {
    const server = await startSwift({ buckets: ['keys'] });
    await check(storeClient(server, 'keys'), true);
  }, 60_000);
});
