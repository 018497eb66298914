// `tar c` (one of the walkers readahead across files is for) over objects another client wrote,
// on a store whose listings carry LastModified to the millisecond (MinIO; Ceph RGW does too):
// the listing gives the file an mtime of hh:mm:ss.mmm, the open (a ranged GET whose
// Last-Modified header has whole seconds) replaces it with hh:mm:ss.000. tar stats the file
// before reading it and again after (fstat): once the kernel's attribute cache (1 s) has expired,
// the two differ, and tar reports "file changed as we read it" and exits 1, for a file no one
// touched. rsync likewise sees the mtime move between runs.
//
// docs/SEMANTICS.md, "Times": mtime of such a file is "the object's Last-Modified"; "so what stat
// shows ... is the same before and after --cache-ttl expires: tar c right after cp -a finds
// nothing 'changed as we read it'". An object's Last-Modified does not change when it is read.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fuseAvailable, mountBucket, sh } from '../mount-helpers.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { MiB, Other } from './ra3-lib.ts';

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.runIf(fuse.ok && minio.ok)('tar c over objects written by another client', () => {
  it('a file read for longer than a second is not "changed as we read it"', async () => {
    const server = await startMinio({ buckets: ['ra3'] });
    const other = new Other(server, 'ra3');
    // MinIO lists its LastModified to the millisecond (whole seconds one time in a thousand).
    await other.put('d/f', randomBytes(2 * MiB));
    const m = await mountBucket(server, 'ra3');
    // tar's reads block on a consumer that starts late: it reads the file over two seconds.
    const r = await sh(`set -o pipefail; cd '${m.dir}/d' && ls -l > /dev/null && tar c f | (sleep 2; cat) | wc -c`);
    const times = await sh(`cd '${m.dir}/d' && stat -c %y f`);
    expect(r.out, `mtime now ${times.out.trim()}`).not.toMatch(/changed as we read it/);
    expect(r.code, r.out).toBe(0);
  });
});
