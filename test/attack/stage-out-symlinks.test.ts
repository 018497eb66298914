// `stage out` follows every symlink in the source, also one that leads out of it, and says so
// nowhere (docs/STAGING.md is silent; `stage in` refuses symlinks in its destination by default,
// "they could lead outside it", with --follow-dest-symlinks to opt in). A link planted in a shared
// results directory (`results/keys -> /root/.ssh`, or `-> /`) makes whoever runs `stage out` upload
// what it points to, with their rights, to the bucket. rclone copies no symlink unless asked
// (-L/--copy-links). Expected: a symlink leading outside the source is not followed by default (it
// is listed as failed or skipped, with a reason), or an option opts in.

import { afterAll, describe, expect, it } from 'vitest';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../helpers/cleanup.ts';
import { tempDir } from '../helpers/tmp.ts';
import { startFakeS3 } from '../stage/attacks/stage-fake-s3.ts';
import { stage } from '../stage/attacks/stage-run.ts';

afterAll(runTeardowns);

describe('stage out: symlinks that lead out of the source', () => {
  it('does not upload what a symlink outside the source points to', async () => {
    const root = await tempDir();
    const secrets = join(root, 'private');
    await mkdir(secrets);
    await writeFile(join(secrets, 'id_ed25519'), 'PRIVATE KEY');
    const src = join(root, 'results');
    await mkdir(src);
    await writeFile(join(src, 'out.dat'), 'results');
    await symlink(secrets, join(src, 'keys'));
    await symlink(join(secrets, 'id_ed25519'), join(src, 'key-file'));
    const s3 = await startFakeS3();
    await stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    expect([...s3.objects.keys()].sort()).toEqual(['p/out.dat']);
  });
});
