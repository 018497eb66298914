// What `--cases` can name in the gateway scenario (bench/gateway/index.ts). Pure.

export const GATEWAY_CASES = ['cached-small', 'cached-big', 'herd', 'mix', 'hostile'] as const;
export type GatewayCase = (typeof GATEWAY_CASES)[number];

/** Whether `name` runs: every case when `--cases` named none of the gateway's. */
export function gatewayCaseWanted(cases: unknown, name: GatewayCase): boolean {
  if (!Array.isArray(cases)) return true;
  const mine = cases.filter((c) => (GATEWAY_CASES as readonly string[]).includes(String(c)));
  return mine.length === 0 || mine.includes(name);
}
