// Every current S3 client must work unchanged inside its scope. The AWS SDK for JavaScript v3 puts
// an object with user metadata or a Content-Disposition that is not ASCII (`Metadata: { name:
// 'café' }`, a file name `é.txt`). It sends the metadata's UTF-8 bytes and signs them; Node's HTTP
// client turns the disposition's é into U+FFFD on the wire, which no signature can match. Through
// the gateway each must fare as it fares at a store that checks signatures strictly (MinIO): the
// gateway reads header bytes as the client signed them.

import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTeardowns } from '../../helpers/cleanup.ts';
import { minioAvailable, startMinio } from '../../helpers/minio.ts';
import { BUCKET, type Rig, startRig } from './s3-harness.ts';

afterAll(runTeardowns);

const minio = await minioAvailable();

describe.runIf(minio.ok)('s3 attack: non-ASCII header values signed by the JS SDK (MinIO)', () => {
  let rig: Rig;
  let store: Awaited<ReturnType<typeof startMinio>>;
  beforeAll(async () => {
    store = await startMinio({ buckets: [BUCKET] });
    rig = await startRig(store);
  }, 60_000);

  const put = async (client: S3Client, key: string, extra: Partial<ConstructorParameters<typeof PutObjectCommand>[0]>) => {
    try {
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'x', ...extra }));
      return 'ok';
    } catch (err) {
      return (err as Error).name;
    }
  };

  it('user metadata and Content-Disposition with é fare through the gateway as they fare at the store', async () => {
    const w = await rig.issue(`${BUCKET}/run42/`, true);
    const via = new S3Client({ endpoint: rig.gw, region: 'us-east-1', forcePathStyle: true, credentials: w, requestChecksumCalculation: 'WHEN_REQUIRED' });
    const direct = new S3Client({
      endpoint: store.endpoint, region: store.region, forcePathStyle: true,
      credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    const meta = { Metadata: { name: 'café' } };
    const disposition = { ContentDisposition: 'attachment; filename="é.txt"' };
    const atStore = { meta: await put(direct, 'run42/d1', meta), disposition: await put(direct, 'run42/d2', disposition) };
    expect(atStore.meta).toBe('ok');
    expect({ meta: await put(via, 'run42/g1', meta), disposition: await put(via, 'run42/g2', disposition) }).toEqual(atStore);
    via.destroy();
    direct.destroy();
  });
});
