// pjdfstest's mkdir, rmdir, symlink, mkfifo and mknod cases that the mount passes (pjdfstest-cases.ts), on a real mount over
// Swift, in the default mode and with --write-back at once (pjdfstest.ts).

import { afterAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../helpers/cleanup.ts';
import { swiftAvailable } from '../helpers/swift.ts';
import { fuseAvailable } from './mount-helpers.ts';
import { casesOf, pjdfstestAvailable, pjdfstestOnBothModes } from './pjdfstest.ts';

afterAll(runTeardowns);

const GROUPS = ['mkdir', 'rmdir', 'symlink', 'mkfifo', 'mknod'];
const ready = fuseAvailable().ok && (await swiftAvailable()).ok && (await pjdfstestAvailable()).ok;

describe.runIf(ready)('pjdfstest: mkdir, rmdir, symlink, mkfifo and mknod', () => {
  it(`passes all ${casesOf(GROUPS).length} cases in both modes`, async () => {
    expect(await pjdfstestOnBothModes(GROUPS)).toEqual([]);
  }, 300_000);
});
