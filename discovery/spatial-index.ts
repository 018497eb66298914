// A latitude/longitude grid index so a nearest-cache query does not have to cost every cache in
// the registry. It rests on two lower bounds of the great-circle distance from the client:
//   - changing latitude by Δφ takes at least a meridian arc: d ≥ R·|Δφ|;
//   - a point whose longitude differs by δ (taken up to 90°) lies beyond the meridian great circle
//     at δ, whose nearest point is R·asin(cos φc · sin δ) away (cross-track distance; for δ ≥ 90°
//     the pole, at 90° − |φc|, is as near as it gets).
// A cell's bound is the larger of the two. Ranking visits latitude bands nearest-first and, within
// each, longitude sectors nearest-first, skipping a cell when its distance share plus its smallest
// load share cannot beat the N-th best cost found, and stopping a sweep when even the smallest
// load share anywhere cannot.
//
// The answers are exactly those of a full scan (a test holds the two side by side); only the
// work differs. Cell minima only ever go down between rebuilds, which keeps them valid lower
// bounds; rebuild() tightens them and runs with the expiry sweep.

import { DISTANCE_WEIGHT, type Placed, type Point, type Ranked, rankNearest } from './ranking.ts';

/** 2° of latitude is about 220 km: fine enough to skip most caches, coarse enough to stay cheap. */
export const BAND_DEG = 2;
/** 5° sectors: 72 per band, so a band's sweep stays short even where longitudes crowd together. */
export const SECTOR_DEG = 5;
const BANDS = 180 / BAND_DEG;
const SECTORS = 360 / SECTOR_DEG;
const RAD = Math.PI / 180;
const W = DISTANCE_WEIGHT;

function loadShare(p: Placed): number {
  return p.maxLoad > 0 ? p.load / p.maxLoad : 1;
}

function cellOf(p: Placed): number {
  const lat = p.latRad! / RAD;
  const lon = p.lonRad! / RAD;
  const band = Math.min(BANDS - 1, Math.max(0, Math.floor((lat + 90) / BAND_DEG)));
  const sector = Math.min(SECTORS - 1, Math.max(0, Math.floor((lon + 180) / SECTOR_DEG)));
  return band * SECTORS + sector;
}

/** Smallest |Δλ| in degrees between `lon` and any longitude of sector `s`, across the date line. */
function sectorGap(lon: number, s: number): number {
  const lo = -180 + s * SECTOR_DEG;
  if (lon >= lo && lon <= lo + SECTOR_DEG) return 0;
  const d = (x: number) => {
    const a = Math.abs(lon - x) % 360;
    return a > 180 ? 360 - a : a;
  };
  return Math.min(d(lo), d(lo + SECTOR_DEG));
}

export class LatitudeIndex<T extends Placed> {
  readonly #cells: Set<T>[] = Array.from({ length: BANDS * SECTORS }, () => new Set<T>());
  readonly #minLoad = new Float64Array(BANDS * SECTORS).fill(Number.POSITIVE_INFINITY);
  readonly #bandMin = new Float64Array(BANDS).fill(Number.POSITIVE_INFINITY);
  readonly #unplaced = new Set<T>();
  readonly #all = new Set<T>();

  add(item: T): void {
    this.#all.add(item);
    if (item.latRad === undefined) {
      this.#unplaced.add(item);
      return;
    }
    const c = cellOf(item);
    const l = loadShare(item);
    this.#cells[c]!.add(item);
    this.#minLoad[c] = Math.min(this.#minLoad[c]!, l);
    const b = Math.floor(c / SECTORS);
    this.#bandMin[b] = Math.min(this.#bandMin[b]!, l);
  }

  remove(item: T): void {
    this.#all.delete(item);
    if (item.latRad === undefined) this.#unplaced.delete(item);
    else this.#cells[cellOf(item)]!.delete(item);
  }

  /** Recomputes the minima from what the cells hold now. */
  rebuild(): void {
    this.#bandMin.fill(Number.POSITIVE_INFINITY);
    for (let c = 0; c < this.#cells.length; c++) {
      let m = Number.POSITIVE_INFINITY;
      for (const item of this.#cells[c]!) m = Math.min(m, loadShare(item));
      this.#minLoad[c] = m;
      const b = Math.floor(c / SECTORS);
      this.#bandMin[b] = Math.min(this.#bandMin[b]!, m);
    }
  }

  values(): IterableIterator<T> {
    return this.#all.values();
  }

  /** The same answer as rankNearest over every item, visiting only the cells that can matter. */
  nearest(client: Point | undefined, n: number, accept: (item: T) => boolean): Ranked<T>[] {
    if (!client || n <= 0) return rankNearest(this.#all, client, n, accept);
    let globalMin = Number.POSITIVE_INFINITY;
    for (let b = 0; b < BANDS; b++) globalMin = Math.min(globalMin, this.#bandMin[b]!);
    const best: Ranked<T>[] = [];
    const worst = () => (best.length < n ? Number.POSITIVE_INFINITY : best[n - 1]!.cost);
    const order: { b: number; share: number }[] = [];
    for (let b = 0; b < BANDS; b++) {
      const lo = -90 + b * BAND_DEG;
      const gapDeg =
        client.lat < lo ? lo - client.lat : client.lat > lo + BAND_DEG ? client.lat - lo - BAND_DEG : 0;
      order.push({ b, share: ((gapDeg * RAD) / Math.PI) * W });
    }
    order.sort((x, y) => x.share - y.share);
    // Longitude shares depend only on the client and the sector: once per query, nearest first.
    const cosC = Math.cos(client.lat * RAD);
    const sectors: { s: number; share: number }[] = [];
    for (let sec = 0; sec < SECTORS; sec++) {
      const delta = Math.min(90, sectorGap(client.lon, sec)) * RAD;
      sectors.push({ s: sec, share: (Math.asin(Math.min(1, cosC * Math.sin(delta))) / Math.PI) * W });
    }
    sectors.sort((x, y) => x.share - y.share);
    for (const { b, share } of order) {
      // Bands come nearest-first, so once even the lightest load anywhere cannot win, nothing can.
      if (share + globalMin * (1 - W) >= worst()) break;
      if (share + this.#bandMin[b]! * (1 - W) >= worst()) continue;
      for (const sec of sectors) {
        const cellShare = Math.max(share, sec.share);
        // Sectors come nearest-first too: none further out in this band can win either.
        if (cellShare + globalMin * (1 - W) >= worst()) break;
        const c = b * SECTORS + sec.s;
        if (this.#cells[c]!.size === 0 || cellShare + this.#minLoad[c]! * (1 - W) >= worst()) continue;
        rankNearest(this.#cells[c]!, client, n, accept, best);
      }
    }
    // Unplaced caches sit at the far side of the earth: only worth costing if they could still win.
    if (this.#unplaced.size > 0 && worst() > W) rankNearest(this.#unplaced, client, n, accept, best);
    return best;
  }
}
