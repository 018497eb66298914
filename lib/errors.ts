// The base of every error estuary shows a user. Each role keeps its own catalogue of codes
// (ESTUARY_GW_*, ESTUARY_FS_*, ...) built from this class, and beside it each code's meaning and
// fix: scripts/gen-errors-doc.ts writes docs/ERRORS.md from those declarations. A role's errors
// are made through errorsOf() (or a class whose code is typed so), so an undeclared code does not
// type-check, and a test checks that every code the source names is declared. A code, once
// published, is never reused for another meaning.

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

/** A code's row in docs/ERRORS.md: what it means (the cause) and what to do (the fix). */
export interface CodeDoc {
  readonly meaning: string;
  readonly fix: string;
}

/** A table of docs/ERRORS.md, under an optional `### heading` and paragraph. Cells are Markdown. */
export interface DocTable {
  readonly heading?: string;
  readonly intro?: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** A role's part of docs/ERRORS.md: `## title`, a paragraph, its tables. */
export interface ErrorsSection {
  readonly title: string;
  readonly intro?: string;
  readonly tables: readonly DocTable[];
}

/** A maker of EstuaryErrors whose code must be one of `codes`: raising an undeclared code does not type-check. */
export function errorsOf<C extends Readonly<Record<string, CodeDoc>>>(_codes: C) {
  return (code: keyof C & string, message: string, options?: EstuaryErrorOptions) => new EstuaryError(code, message, options);
}

/** The usual table of codes: code, meaning, what to do, in the order declared. */
export function codeTable(
  codes: Readonly<Record<string, CodeDoc>>,
  columns: readonly string[] = ['code', 'meaning', 'what to do'],
): DocTable {
  return { columns, rows: Object.entries(codes).map(([code, d]) => [`\`${code}\``, d.meaning, d.fix]) };
}
