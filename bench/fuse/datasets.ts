// The datasets of the KEK paper's Table 1 (1000×1 MB, 100×10 MB, 10×100 MB, 1×1000 MB: the same
// gigabyte cut four ways, so the small-file cost of each filesystem shows against its streaming
// rate) and the metadata suite's sizes, full and --quick. Pure: no I/O.

export interface Dataset {
  /** "1000×1MB": the row label in tables and charts. */
  readonly label: string;
  readonly files: number;
  readonly fileBytes: number;
}

export interface MetadataSizes {
  readonly createSerial: number;
  readonly createParallel: number;
  readonly listFiles: number;
  /** A tree of `treeDirs` directories holding `treeFilesPerDir` files each. */
  readonly treeDirs: number;
  readonly treeFilesPerDir: number;
  readonly unlink: number;
  readonly firstByteFileBytes: number;
}

const MB = 1e6;

function dataset(files: number, fileBytes: number): Dataset {
  return { label: `${files}×${fileBytes / MB}MB`, files, fileBytes };
}

export const PAPER_DATASETS: readonly Dataset[] = [
  dataset(1000, MB),
  dataset(100, 10 * MB),
  dataset(10, 100 * MB),
  dataset(1, 1000 * MB),
];

// --quick keeps the four shapes (many small files down to one big one) at 1/100 of the bytes,
// which is what lets every peer run every case inside the two-minute smoke budget.
export const QUICK_DATASETS: readonly Dataset[] = [
  dataset(20, 0.1 * MB),
  dataset(5, 1 * MB),
  dataset(2, 4 * MB),
  dataset(1, 10 * MB),
];

// goofys's published suite: 100 creates, 1000-entry ls, a find over ~820 entries (20 × 40 + 20).
export const PAPER_METADATA: MetadataSizes = {
  createSerial: 100,
  createParallel: 100,
  listFiles: 1000,
  treeDirs: 20,
  treeFilesPerDir: 40,
  unlink: 100,
  firstByteFileBytes: 100 * MB,
};

export const QUICK_METADATA: MetadataSizes = {
  createSerial: 10,
  createParallel: 10,
  listFiles: 50,
  treeDirs: 4,
  treeFilesPerDir: 5,
  unlink: 10,
  firstByteFileBytes: 1 * MB,
};

/**
 * What `--cases` can name: the four Table 1 shapes, written with an ASCII x, and the metadata
 * suite. In --quick mode a shape names the quick dataset of the same position.
 */
export const FUSE_CASES = ['1000x1MB', '100x10MB', '10x100MB', '1x1000MB', 'metadata'] as const;
export type FuseCase = (typeof FUSE_CASES)[number];

/** The datasets `cases` names (all of them when it is undefined), and whether the suite runs. */
export function selectCases(
  datasets: readonly Dataset[],
  cases: readonly FuseCase[] | undefined,
): { datasets: Dataset[]; metadata: boolean } {
  if (!cases) return { datasets: [...datasets], metadata: true };
  return {
    datasets: datasets.filter((_, i) => cases.includes(FUSE_CASES[i]!)),
    metadata: cases.includes('metadata'),
  };
}

export function datasetBytes(d: Dataset): number {
  return d.files * d.fileBytes;
}

/**
 * Disk a fuse run needs at its peak: the source datasets, one downloaded copy, the objects the
 * local S3 server stores (one peer's upload at a time: each run's objects are deleted after it),
 * the largest file once more for filesystems that stage a whole file on disk (s3fs), and the
 * metadata suite's first-byte file when the suite runs. 10% on top for filesystem overhead and
 * server metadata.
 */
export function fuseDiskEstimate(
  datasets: readonly Dataset[],
  metadata: MetadataSizes | undefined,
  localServer: boolean,
): number {
  const total = datasets.reduce((sum, d) => sum + datasetBytes(d), 0);
  const largest = Math.max(0, ...datasets.map((d) => d.fileBytes));
  const copies = localServer ? 3 : 2;
  const firstByte = metadata?.firstByteFileBytes ?? 0;
  const serverMeta = localServer ? firstByte : 0;
  return Math.ceil((total * copies + largest + firstByte + serverMeta) * 1.1);
}
