// The access log in Squid's native format, so an admin's `tail -f access.log`, awk one-liners and
// log analysers (calamaris, squidanalyzer) keep working: one line per request,
//   time.ms elapsed client code/status bytes method URL ident hierarchy/host type
//   1795491000.123    120 10.1.2.3 TCP_MISS/200 4131 GET http://s1/cvmfs/… - HIER_DIRECT/s1 application/x-cvmfs
// The Squid code comes from the Cache-Status estuary sent. Lines go to --access-log FILE (opened
// for appending by each worker; a line is one write, so workers' lines never interleave) or to
// stdout with `-`, never into the diagnostic log on stderr.

import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { gatewayErrors } from './errors.ts';

export interface AccessRecord {
  readonly endMs: number;
  readonly elapsedMs: number;
  readonly client: string | undefined;
  readonly status: number;
  readonly bytes: number;
  readonly method: string;
  readonly url: string;
  /** The Cache-Status header sent, if any. */
  readonly cacheStatus: string | undefined;
  /** The origin's host when the answer came from upstream. */
  readonly upstreamHost: string | undefined;
  readonly contentType: string | undefined;
}

/** Squid's result code for what estuary did, read from its Cache-Status. */
export function squidCode(cacheStatus: string | undefined, status: number): string {
  const s = cacheStatus ?? '';
  if (/; hit\b/.test(s)) return /stale-on-error/.test(s) ? 'TCP_REFRESH_FAIL_OLD' : 'TCP_HIT';
  if (/fwd=stale/.test(s)) return /fwd-status=304/.test(s) ? 'TCP_REFRESH_UNMODIFIED' : 'TCP_REFRESH_MODIFIED';
  if (/fwd=/.test(s)) return 'TCP_MISS';
  if (status === 403 || status === 407) return 'TCP_DENIED';
  return 'NONE';
}

export function squidLine(r: AccessRecord): string {
  const code = squidCode(r.cacheStatus, r.status);
  const fetched = code !== 'TCP_HIT' && code !== 'TCP_DENIED' && code !== 'NONE' && r.upstreamHost;
  const hier = fetched ? `HIER_DIRECT/${r.upstreamHost}` : 'HIER_NONE/-';
  const type = (r.contentType ?? '').split(';')[0]!.trim() || '-';
  // A URL with a space would shift every field after it; Squid escapes it the same way.
  const url = r.url.replace(/ /g, '%20');
  const time = (r.endMs / 1000).toFixed(3);
  const elapsed = String(Math.round(r.elapsedMs)).padStart(6);
  return `${time} ${elapsed} ${r.client ?? '-'} ${code}/${String(r.status).padStart(3, '0')} ${r.bytes} ${r.method} ${url} - ${hier} ${type}\n`;
}

export type AccessLogger = (r: AccessRecord) => void;

/**
 * `-` for stdout, else a file opened for appending (created if missing), at once, so a path that
 * cannot be written stops the start with ESTUARY_GW_ACCESS_LOG instead of failing on each request.
 */
export function openAccessLog(dest: string): {
  write: AccessLogger;
  close: () => Promise<void>;
  reopen: () => void;
} {
  const openFile = () => createWriteStream('', { fd: openSync(dest, 'a', 0o640) });
  let out: NodeJS.WritableStream | WriteStream = process.stdout;
  if (dest !== '-') {
    try {
      out = openFile();
    } catch (err) {
      throw gatewayErrors.accessLog(dest, (err as NodeJS.ErrnoException).code ?? String(err));
    }
  }
  return {
    write: (r) => void out.write(squidLine(r)),
    close: () =>
      dest === '-' ? Promise.resolve() : new Promise<void>((done) => (out as WriteStream).end(() => done())),
    /**
     * Opens the path again (after logrotate moved the file, like Squid's `-k rotate`); lines
     * already queued finish in the old file. Throws if the path cannot be opened; the old file
     * is then kept.
     */
    reopen: () => {
      if (dest === '-') return;
      const next = openFile();
      const old = out as WriteStream;
      out = next;
      old.end();
    },
  };
}
