// What a bar chart is, as data: shared by the code that decides the charts (charts.ts) and the
// code that draws them (svg.ts), so neither imports the other. Imports nothing.

export interface Series {
  readonly peer: string;
  readonly medians: readonly (number | null)[];
  readonly mins: readonly (number | null)[];
  readonly maxs: readonly (number | null)[];
}

export interface ChartSpec {
  /** File-name safe: "fuse-cp-up". */
  readonly id: string;
  /** The case family drawn: "cp up", or the unit for cases without a dataset. */
  readonly family: string;
  readonly title: string;
  readonly unit: string;
  readonly higherIsBetter: boolean;
  readonly categories: readonly string[];
  /** The competitors, one bar each per category. */
  readonly series: readonly Series[];
  /** The reference peer (e.g. the SDK alone), drawn as a dashed line per category. */
  readonly reference?: Series;
  /** Most runs behind any bar. */
  readonly runs: number;
  /** Why the chart is not a measurement to quote: "--quick run: ...", "single run: ...". */
  readonly caveat?: string;
}

/** How a chart and its table label the reference peer: "sdk-alone (reference)". */
export function referenceLabel(peer: string): string {
  return `${peer} (reference)`;
}
