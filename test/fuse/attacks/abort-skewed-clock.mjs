// Preloaded into a mount (NODE_OPTIONS=--import) by abort-clock-skew.test.ts: this host's clock runs
// ESTUARY_TEST_SKEW_MS ahead of the store's, for everything the mount reads the time with (Date).
const D = Number(process.env.ESTUARY_TEST_SKEW_MS ?? 0);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
class SkewedDate extends RealDate {
  constructor(...a) { if (a.length === 0) super(realNow() + D); else super(...a); }
  static now() { return realNow() + D; }
}
globalThis.Date = SkewedDate;
