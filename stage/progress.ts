// Progress of a transfer: on a terminal one line redrawn each second (bytes, rate, files); else a
// JSON log line every 5 s, so a batch job's log shows it is alive without drowning.

import type { Logger } from '../lib/log.ts';

export class Progress {
  readonly #out: NodeJS.WriteStream;
  readonly #log: Logger;
  readonly #started = performance.now();
  readonly #timer: NodeJS.Timeout;
  #bytes = 0;
  #files = { copied: 0, skipped: 0, failed: 0 };

  constructor(out: NodeJS.WriteStream, log: Logger) {
    this.#out = out;
    this.#log = log;
    this.#timer = setInterval(() => this.#show(), out.isTTY ? 1000 : 5000);
    this.#timer.unref();
  }

  get seconds(): number {
    return Math.round((performance.now() - this.#started) / 100) / 10;
  }

  bytes(n: number): void {
    this.#bytes += n;
  }

  file(rel: string, outcome: 'copied' | 'skipped' | 'failed', detail?: string): void {
    this.#files[outcome]++;
    if (outcome === 'failed') this.#log.warn({ file: rel, error: detail }, 'file not copied');
  }

  #show(): void {
    const mib = this.#bytes / 2 ** 20;
    const rate = mib / Math.max(0.001, this.seconds);
    const f = this.#files;
    if (this.#out.isTTY) {
      this.#out.write(`\r${mib.toFixed(1)} MiB  ${rate.toFixed(1)} MiB/s  ${f.copied} copied, ${f.skipped} identical, ${f.failed} failed   `);
    } else {
      this.#log.info({ mib: Math.round(mib), mibPerS: Math.round(rate * 10) / 10, ...f }, 'progress');
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    if (this.#out.isTTY) this.#out.write('\n');
  }
}
