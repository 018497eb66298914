// Where the data is: the seam between the coordinator and what the rest of estuary knows about
// datasets. The control loop asks a DataSource once per interval what each site's caches hold
// and hands the answer to the policy inside the snapshot; placement reads nothing else about
// data. Production wires it to the sites' gateways and discovery; a simulator wires it to its
// own caches. Nothing behind this interface may be asked from inside the policy (it is pure).

/** Bytes of each declared input (URL or prefix, as jobs write them) that a site's caches hold. */
export type Holdings = ReadonlyMap<string, number>;

export interface DataSource {
  /**
   * What every site with a cache holds now, for the inputs named (the pending jobs' declared
   * inputs). A site missing from the answer holds nothing known; a failure is thrown and the
   * loop goes on with the last answer.
   */
  holdings(inputs: readonly string[]): Promise<ReadonlyMap<string, Holdings>>;
  /** Size of an input whose job gave none; undefined when it cannot be known. Asked once per URL. */
  size(url: string): Promise<number | undefined>;
  /** Asks a site's cache to fetch these inputs now, so the drones that boot there start hot. */
  prewarm(site: string, urls: readonly string[]): Promise<void>;
}

/** No knowledge of data: placement by queue pressure alone. */
export const noData: DataSource = {
  holdings: async () => new Map(),
  size: async () => undefined,
  prewarm: async () => {},
};
