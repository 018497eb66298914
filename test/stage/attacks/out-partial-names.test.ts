// `stage out` silently leaves out every source entry whose name ends in `.estuary-partial`, files
// and whole directories alike (walk() skips them before it looks at what they are), and still
// exits 0 with nothing in the summary. Those are stage's own names only inside a `stage in`
// destination; in a source they may be a user's data (or the partial files of another tool's run
// that the user does mean to keep). `stage in` at least lists such keys as failed, with the reason.
// Expected: uploaded, or listed (failed or skipped, with the reason) and a status that is not 0.

import { afterAll, describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { startFakeS3 } from './stage-fake-s3.ts';
import { stage } from './stage-run.ts';

afterAll(runTeardowns);

describe('stage out: source names ending in .estuary-partial', () => {
  it('are not left out silently', async () => {
    const s3 = await startFakeS3();
    const src = await tempDir();
    await writeFile(join(src, 'a.txt'), 'a');
    await writeFile(join(src, 'notes.estuary-partial'), 'user data');
    await mkdir(join(src, 'run.estuary-partial'));
    await writeFile(join(src, 'run.estuary-partial', 'results.csv'), '1,2,3');
    const r = await stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', await tempDir()]);
    const uploaded = [...s3.objects.keys()];
    const mentioned = JSON.stringify(r.summary);
    for (const rel of ['notes.estuary-partial', 'run.estuary-partial/results.csv']) {
      expect(uploaded.includes(`p/${rel}`) || (mentioned.includes(rel.split('/')[0]!) && r.code !== 0), rel).toBe(true);
    }
  });
});
