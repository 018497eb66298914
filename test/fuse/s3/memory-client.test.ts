import { MemoryObjectClient } from '../../../fuse/s3/memory-client.ts';
import { objectClientContract } from './contract.ts';

objectClientContract('in-memory', async () => ({
  client: new MemoryObjectClient(),
  awsMultipartEtags: true,
  partCopy: true,
  emptyRangeGet: true,
  listsUploads: true,
}));
