// The base of every error estuary shows a user. Each role keeps its own catalogue of codes
// (ESTUARY_GW_*, ESTUARY_FS_*, ...) built from this class; docs/ERRORS.md lists every code, and a
// test keeps the two in step. A code, once published, is never reused for another meaning.

export interface EstuaryErrorOptions {
  /** Process exit status when this error ends a command: 2 for bad input, 1 otherwise. */
  readonly exitCode?: number;
  readonly cause?: unknown;
}

export class EstuaryError extends Error {
  readonly code: string;
  readonly exitCode: number;

  constructor(code: string, message: string, options: EstuaryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EstuaryError';
    this.code = code;
    this.exitCode = options.exitCode ?? 1;
  }
}

export function isEstuaryError(err: unknown): err is EstuaryError {
  return err instanceof EstuaryError;
}

/** One line for a human: the message of an EstuaryError, or a short form of anything else. */
export function oneLine(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const text = err.message.split('\n')[0] ?? '';
    return typeof code === 'string' && !(err instanceof EstuaryError) ? `${text} (${code})` : text;
  }
  return String(err);
}
