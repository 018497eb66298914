// `stage out` follows every symlink in the source, also one that leads out of it, and says so
// nowhere (docs/STAGING.md is silent; `stage in` refuses symlinks in its destination by default,
// "they could lead outside it", with --follow-dest-symlinks to opt in). A link planted in a shared
// results directory (`results/keys -> /root/.ssh`, or `-> /`) makes whoever runs `stage out` upload
// what it points to, with their rights, to the bucket. rclone copies no symlink unless asked
// (-L/--copy-links). Expected: a symlink leading outside the source is not followed by default (it
// is listed as failed or skipped, with a reason), or an option opts in. Decided: each such link is
// listed as failed (exit 1) and --follow-source-symlinks follows them; links inside are followed.

import { afterAll, describe, expect, it } from 'vitest';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startFakeS3 } from './stage-fake-s3.ts';
import { stage } from './stage-run.ts';

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
    const r = await stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    expect([...s3.objects.keys()].sort()).toEqual(['p/out.dat']);
    // Documented (docs/STAGING.md): each such link is listed as failed, with the option that follows it.
    expect(r.code).toBe(1);
    expect(r.summary?.failed.map((f) => f.rel).sort()).toEqual(['key-file', 'keys']);
    expect(r.summary?.failed[0]?.error).toMatch(/leads outside the source; not followed \(--follow-source-symlinks follows it\)/);
    const opted = await stage(['out', src, 's3://bkt/q/', '--endpoint', s3.endpoint, '--state-dir', await tempDir(), '--follow-source-symlinks']);
    expect(opted.code).toBe(0);
    expect([...s3.objects.keys()].filter((k) => k.startsWith('q/')).sort()).toEqual(['q/key-file', 'q/keys/id_ed25519', 'q/out.dat']);
  });
});
