// Removal of open files and renames over open writers through a real mount over MinIO (the strict
// server: checksums and signatures as AWS has them). See hidden-suite.ts.

import { afterAll, beforeAll, describe } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { type MinioServer, minioAvailable, startMinio } from '../../helpers/minio.ts';
import { fuseAvailable } from '../mount-helpers.ts';
import { hiddenSuite } from './hidden-suite.ts';

afterAll(runTeardowns);

const fuse = fuseAvailable();
const minio = await minioAvailable();

describe.skipIf(!fuse.ok || !minio.ok)('hidden files over MinIO', () => {
  let server: MinioServer;
  beforeAll(async () => {
    server = await startMinio();
  }, 30_000);
  hiddenSuite(() => server);
});
