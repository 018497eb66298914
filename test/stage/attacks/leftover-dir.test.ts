// A mistyped prefix or an unreachable store leaves no empty destination directory behind (the
// command removes the directory it created). A bad --credentials file does: the destination is
// created before the credential file is read, and that error is thrown outside the clean-up.

import { afterAll, describe, expect, it } from 'vitest';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { stage } from './stage-run.ts';

afterAll(runTeardowns);

describe('stage in: a bad credential file', () => {
  it('exits 2 and leaves no empty destination directory', async () => {
    const root = await tempDir();
    const cred = join(root, 'cred.json');
    await writeFile(cred, '{"not":"a credential"}');
    const dest = join(root, 'dest');
    const r = await stage(['in', 's3://bkt/p/', dest, '--endpoint', 'http://127.0.0.1:9', '--credentials', cred, '--state-dir', await tempDir()]);
    expect(r.code).toBe(2);
    expect(await stat(dest).then(() => 'exists', () => 'absent')).toBe('absent');
  });
});
