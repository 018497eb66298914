// Progress of a transfer. On a terminal, one line on stderr redrawn in place every second, as
// rclone and `aws s3 cp` do: bytes and files done of what is listed so far, rate, time left; a
// plain summary at the end. Elsewhere (a batch job's log), a JSON log line every 5 s. The words are
// the summary's: a file is `copied`, `skipped` (already identical at the destination) or `failed`.
// The rendering functions are pure and tested without a terminal.

import type { Logger } from '../lib/log.ts';
import { MAX_FAILED_LISTED, type Outcome, type Summary } from './transfer.ts';
import { escapeControls as printable } from '../lib/terminal-text.ts';

export interface Counts {
  /** Bytes moved over the network in this run. */
  moved: number;
  /** Bytes that needed no moving: files skipped, parts and partial files resumed. */
  spared: number;
  files: { copied: number; skipped: number; failed: number };
  listed: { files: number; bytes: number; complete: boolean };
  seconds: number;
}

const MiB = 2 ** 20;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '-';
  const t = Math.round(s);
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = String(t % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** The in-place line: `12.0 MiB / 40.0 MiB, 30%, 3.00 MiB/s, ETA 0:09 · files 2 / 3 (1 copied, 1 skipped, 0 failed)`. */
export function renderLine(c: Counts, width = 120): string {
  const done = c.moved + c.spared;
  const of = (n: number) => `${c.listed.complete ? '' : '≥'}${n}`;
  const rate = c.moved / Math.max(0.001, c.seconds);
  const left = c.listed.complete && rate > 0 ? formatSeconds(Math.max(0, c.listed.bytes - done) / rate) : '-';
  const pct = c.listed.bytes > 0 ? `, ${Math.floor((100 * done) / c.listed.bytes)}%` : '';
  const f = c.files;
  const filesDone = f.copied + f.skipped + f.failed;
  const bytes = `${formatBytes(done)} / ${c.listed.complete ? '' : '≥'}${formatBytes(c.listed.bytes)}${pct}, ${formatBytes(rate)}/s, ETA ${left}`;
  const line = `${bytes} · files ${filesDone} / ${of(c.listed.files)} (${f.copied} copied, ${f.skipped} skipped, ${f.failed} failed)`;
  return line.length > width ? line.slice(0, Math.max(0, width - 1)) : line;
}

// A key may hold any byte but NUL: a name written raw to a terminal could retitle it, clear it,
// or split a line, so every name shown is escaped (lib/terminal-text.ts).
export { printable };

/** The closing summary for a person: what was done, what failed, what was resumed. */
export function renderSummary(s: Summary, seconds: number): string {
  const rate = s.bytes / MiB / Math.max(0.001, seconds);
  const lines = [
    `copied ${s.copied} file${s.copied === 1 ? '' : 's'} (${formatBytes(s.bytes)}), skipped ${s.skipped}, failed ${s.failed.length + s.failedMore} in ${formatSeconds(seconds)} (${rate.toFixed(1)} MiB/s)`,
  ];
  if (s.resumedParts > 0 || s.resumedBytes > 0) lines.push(`resumed from an earlier run: ${s.resumedParts} parts, ${formatBytes(s.resumedBytes)}`);
  for (const f of s.failed.slice(0, 10)) lines.push(printable(`failed: ${f.rel}: ${f.error}`));
  const more = s.failed.length + s.failedMore - 10;
  if (more > 0) lines.push(`… and ${more} more failed (the JSON summary with --json lists the first ${MAX_FAILED_LISTED})`);
  return `${lines.join('\n')}\n`;
}

/** `interrupted: 212 of 301 files done, 4 parts of big.bin saved; run the same command to resume` */
export function interruptedLine(s: Summary): string {
  const done = s.copied + s.skipped;
  const total = s.listed.complete ? ` of ${s.listed.files}` : s.listed.files > 0 ? ` of at least ${s.listed.files}` : '';
  const saved = s.interrupted.filter((i) => i.saved !== 'nothing').map((i) => `${i.saved} of ${printable(i.rel)}`);
  const shown = saved.length > 3 ? [...saved.slice(0, 3), `${saved.length - 3} more files in part`] : saved;
  const part = shown.length > 0 ? `, ${shown.join(', ')} saved` : '';
  return `interrupted: ${done}${total} files done${part}; run the same command to resume`;
}

export class Progress {
  readonly #out: NodeJS.WriteStream;
  readonly #log: Logger;
  readonly #tty: boolean;
  readonly #started = performance.now();
  readonly #timer: NodeJS.Timeout;
  readonly #counts: Counts = { moved: 0, spared: 0, files: { copied: 0, skipped: 0, failed: 0 }, listed: { files: 0, bytes: 0, complete: false }, seconds: 0 };
  #drawn = false;

  constructor(out: NodeJS.WriteStream, log: Logger) {
    this.#out = out;
    this.#log = log;
    this.#tty = out.isTTY === true;
    this.#timer = setInterval(() => this.#show(), this.#tty ? 1000 : 5000);
    this.#timer.unref();
  }

  get seconds(): number {
    return Math.round((performance.now() - this.#started) / 100) / 10;
  }

  bytes(n: number): void {
    this.#counts.moved += n;
  }

  listed(files: number, bytes: number, complete: boolean): void {
    this.#counts.listed = { files, bytes, complete };
  }

  file(rel: string, outcome: Outcome, size: number, detail?: string): void {
    if (outcome === 'interrupted') return;
    this.#counts.files[outcome]++;
    if (outcome === 'skipped') this.#counts.spared += size;
    if (outcome === 'failed') this.#say({ file: rel, error: detail }, 'file not copied', `failed: ${rel}: ${detail}`, 'warn');
  }

  resumed(rel: string, what: string, bytes: number): void {
    this.#counts.spared += bytes;
    this.#say({ file: rel, resumed: what }, 'resuming', `resuming ${rel}: ${what}`, 'info');
  }

  /** A line for a person above the progress line on a terminal, a log line elsewhere. */
  #say(fields: Record<string, unknown>, msg: string, text: string, level: 'info' | 'warn'): void {
    if (!this.#tty) return void this.#log[level](fields, msg);
    this.#out.write(`${this.#drawn ? '\r\x1b[K' : ''}${printable(text)}\n`);
    this.#drawn = false;
  }

  #show(): void {
    this.#counts.seconds = this.seconds;
    if (this.#tty) {
      this.#out.write(`\r${renderLine(this.#counts, (this.#out.columns || 120) - 1)}\x1b[K`);
      this.#drawn = true;
    } else {
      const c = this.#counts;
      this.#log.info({ mib: Math.round(c.moved / MiB), mibPerS: Math.round((c.moved / MiB / Math.max(0.001, c.seconds)) * 10) / 10, ...c.files, listed: c.listed.files }, 'progress');
    }
  }

  /** Ends the in-place line (the summary follows on a line of its own). */
  stop(): void {
    clearInterval(this.#timer);
    // The last state, also for a copy shorter than one redraw; nothing for a run that listed nothing.
    if (this.#tty && (this.#drawn || this.#counts.listed.files > 0)) {
      this.#show();
      this.#out.write('\n');
    }
  }
}
