// Removal of open files and renames over open writers through a real mount over Swift (its S3 API;
// no copy condition on objects in parts). See hidden-suite.ts.

import { afterAll, beforeAll, describe } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type SwiftServer, swiftAvailable, startSwift } from '../../helpers/swift.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { hiddenSuite } from './hidden-suite.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const swift = await swiftAvailable();

describe.skipIf(!fuse.ok || !swift.ok)('hidden files over Swift', () => {
  let server: SwiftServer;
  beforeAll(async () => {
    server = await startSwift();
  }, 30_000);
  hiddenSuite(() => server);
});
