// shoal-client's reading of a /nearest* answer, rewritten with its own regular expressions
// (shoal-client 1.0.4, parseServerData and convertServerData). The client counts caches by the
// matches of `"load": `, then takes the i-th match of each field for cache i: a JSON answer with
// other spacing yields no caches at all, and one with a field out of step mixes caches up.

const DATA_TYPES = [
  'load',
  'distance',
  'squid_port',
  'last_active',
  'created',
  'external_ip',
  'hostname',
  'public_ip',
  'private_ip',
  'local',
] as const;
const GEO_DATA_TYPES = [
  'city',
  'region_name',
  'area_code',
  'time_zone',
  'dma_code',
  'metro_code',
  'country_code3',
  'latitude',
  'postal_code',
  'longitude',
  'country_code',
  'country_name',
  'continent',
] as const;

export type ClientValue = number | string | null;
export type ClientCache = Record<string, ClientValue | Record<string, ClientValue>> & {
  geo_data: Record<string, ClientValue>;
};

/** convertServerData: digits to int, else float, else None for anything holding "null", else text. */
function convert(val: string): ClientValue {
  if (/^\d+$/.test(val)) return Number(val);
  // Python's float() takes what JSON numbers look like, plus inf/nan spellings left out here.
  if (/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(val)) return Number(val);
  if (val.includes('null')) return null;
  return val.replace(/^"+|"+$/g, '');
}

function findAll(pattern: string, text: string): string[] {
  return [...text.matchAll(new RegExp(pattern, 'g'))].map((m) => m[1] ?? '');
}

export function parseLikeShoalClient(body: string): Record<string, ClientCache> {
  const count = findAll(`"${DATA_TYPES[0]}": ([^,}]+)`, body).length;
  const out: Record<string, ClientCache> = {};
  for (let i = 0; i < count; i++) out[String(i)] = { geo_data: {} } as ClientCache;
  for (const t of DATA_TYPES) {
    findAll(`"${t}": ([^,]+)[,|}]`, body).forEach((v, i) => {
      // Python would raise KeyError here and the client would stop: a test must see it.
      if (!out[String(i)]) throw new Error(`field ${t} has more matches than there are caches`);
      out[String(i)]![t] = convert(v);
    });
  }
  for (const t of GEO_DATA_TYPES) {
    findAll(`"${t}": ("[^"]*|[^,]*)`, body).forEach((v, i) => {
      if (!out[String(i)]) throw new Error(`geo field ${t} has more matches than there are caches`);
      out[String(i)]!.geo_data[t] = convert(v);
    });
  }
  return out;
}
