// A file that `stat` says is empty but that reads as bytes (a procfs/sysfs file, reached through
// a symlink in the source; or an empty file a job starts writing between the walk and the upload).
// The SHA-256 pass reads to end of file, so it hashes the bytes; the PUT announces 0 bytes
// (`fileBody` with start = end = 0 has no end and reads the whole file, but the request is sent
// with Content-Length 0). The store keeps an empty object whose x-amz-meta-sha256 is the hash of
// bytes it never received, replacing what was stored under that key, and every `stage in` of it
// then fails "content does not match the checksum the store holds". A file's recorded SHA-256
// must describe the bytes stored.

import { afterAll, describe, expect, it } from 'vitest';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { sha256, startFakeS3 } from './stage-fake-s3.ts';
import { stage } from './stage-run.ts';

afterAll(runTeardowns);

describe('stage out: a file listed empty that reads as bytes', () => {
  it('never stores an object whose recorded SHA-256 is not that of its bytes', async () => {
    const s3 = await startFakeS3(new Map([['p/version', { body: Buffer.from('the earlier upload'), sha256: true }]]));
    const src = await tempDir();
    await symlink('/proc/version', join(src, 'version'));
    await writeFile(join(src, 'a'), 'a');
    // The link leads out of the source: followed only when asked (docs/STAGING.md).
    await stage(['out', src, 's3://bkt/p/', '--endpoint', s3.endpoint, '--state-dir', await tempDir(), '--follow-source-symlinks']);
    const o = s3.objects.get('p/version')!;
    expect(o.sha256 === true ? sha256(o.body) : o.sha256).toBe(sha256(o.body));
  });
});
