// The error catalogue of `estuary stage`. Codes are stable and listed in docs/ERRORS.md (## stage).

import { type CodeDoc, codeTable, type DocTable, type ErrorsSection, errorsOf } from '../lib/errors.ts';

/** Exit statuses a job script can branch on (docs/ERRORS.md, ## stage). */
export const EXIT = { ok: 0, someFailed: 1, badInput: 2, sigint: 130, sigterm: 143 } as const;

/** What each exit status means, as docs/ERRORS.md says it. */
const EXIT_MEANINGS: Record<keyof typeof EXIT, string> = {
  ok: 'every file copied or skipped (identical at the destination)',
  someFailed: 'some files failed or were refused (listed in the summary); run again to retry them',
  badInput:
    'bad arguments, the destination is in use by another run, the store cannot be listed, nothing to copy, or more than `--max-objects`',
  sigint: 'stopped by SIGINT (Ctrl-C): in-flight work saved, one `interrupted: …` line; run the same command to resume',
  sigterm: 'stopped by SIGTERM, as after SIGINT',
};

/** Each code's row in docs/ERRORS.md, in the order listed there. */
export const STAGE_CODES = {
  ESTUARY_STAGE_ARGS: {
    meaning: 'the direction is not `in`, `out` or `sync`, the S3 side is not `s3://BUCKET/PREFIX`, or both sides are S3',
    fix: 'name one local directory and one `s3://` prefix',
  },
  ESTUARY_STAGE_SOURCE: {
    meaning: 'the local source of `stage out` is missing or not a directory',
    fix: 'check the path',
  },
  ESTUARY_STAGE_DESTINATION: {
    meaning: 'the destination directory of `stage in` cannot be created or written',
    fix: 'check the path and its permissions',
  },
  ESTUARY_STAGE_CREDENTIALS: {
    meaning: '`--credentials FILE` is unreadable or not the JSON `estuary gateway credentials issue` prints',
    fix: 'issue a new credential file',
  },
  ESTUARY_STAGE_LOCKED: {
    meaning: '`stage in`: another `estuary stage` is writing to the same destination directory (`… is being written by another estuary stage (process 4711)`); the kernel drops the lock when that process ends, however it ends',
    fix: 'wait for it to end, or stage into another directory',
  },
  ESTUARY_STAGE_STORE: {
    meaning: 'the bucket cannot be listed: endpoint down or silent for `--timeout` on every attempt, wrong or expired credentials, no such bucket; or the store broke the listing protocol (`the store answered …`: a page marked truncated without a continuation token, a continuation token it gave before, 1,000 pages in a row without an object, a page over 16 MiB or of more than 10,000 keys)',
    fix: "check `--endpoint`, the credentials and the bucket; a protocol fault is the store's (or a proxy's): report it to its operators",
  },
  ESTUARY_STAGE_EMPTY: {
    meaning: '`no objects under s3://bucket/prefix/ — check the prefix` (`stage in`), or no files under the source directory (`stage out`): usually a mistyped path',
    fix: 'check the prefix or path',
  },
  ESTUARY_STAGE_TOO_MANY: {
    meaning: 'the listing holds more than `--max-objects` (default 1,000,000) objects',
    fix: 'stage a narrower prefix, or raise `--max-objects`',
  },
  ESTUARY_STAGE_COLLISION: {
    meaning: 'exit 1: keys that map to one local path (`d//f` and `d/f`, `e/./g` and `e/g`, `F` and `f` on a case-insensitive destination); the first listed of each was copied, the others not',
    fix: 'rename the keys in the store, or stage them into separate directories',
  },
  ESTUARY_STAGE_INTERRUPTED: {
    meaning: 'exit 130/143: SIGINT or SIGTERM stopped the copy; the line says how many files are done and what of the rest is saved',
    fix: 'run the same command to resume',
  },
} satisfies Record<string, CodeDoc>;

const stageError = errorsOf(STAGE_CODES);

const BAD_INPUT = { exitCode: EXIT.badInput };

export const stageErrors = {
  arguments: (message: string) => stageError('ESTUARY_STAGE_ARGS', message, BAD_INPUT),
  source: (path: string, reason: string) =>
    stageError('ESTUARY_STAGE_SOURCE', `cannot read ${path} (${reason}); check the path`, BAD_INPUT),
  destination: (path: string, reason: string) =>
    stageError('ESTUARY_STAGE_DESTINATION', `cannot write to ${path} (${reason}); check the path and its permissions`, BAD_INPUT),
  credentials: (file: string, reason: string) =>
    stageError(
      'ESTUARY_STAGE_CREDENTIALS',
      `cannot use credential file ${file} (${reason}); give the JSON that estuary gateway credentials issue prints`,
      BAD_INPUT,
    ),
  store: (what: string, reason: string) =>
    stageError(
      'ESTUARY_STAGE_STORE',
      `${what} failed: ${reason}; check --endpoint, the credentials and that the bucket exists`,
      BAD_INPUT,
    ),
  locked: (dir: string, pid: number | undefined) =>
    stageError(
      'ESTUARY_STAGE_LOCKED',
      `${dir} is being written by another estuary stage (${pid === undefined ? 'its PID unknown' : `process ${pid}`}); wait for it to end, or stage into another directory`,
      BAD_INPUT,
    ),
  protocol: (what: string, reason: string) =>
    stageError('ESTUARY_STAGE_STORE', `${what} failed: the store answered ${reason}; this is a fault of the store or a proxy before it, report it to its operators`, BAD_INPUT),
  empty: (where: string) =>
    stageError('ESTUARY_STAGE_EMPTY', `no objects under ${where} — check the prefix`, BAD_INPUT),
  emptySource: (dir: string) =>
    stageError('ESTUARY_STAGE_EMPTY', `no files under ${dir} — check the path`, BAD_INPUT),
  tooMany: (where: string, max: number) =>
    stageError(
      'ESTUARY_STAGE_TOO_MANY',
      `the listing of ${where} holds more than ${max} objects; stage a narrower prefix or raise --max-objects`,
      BAD_INPUT,
    ),
  collisions: (list: string) =>
    stageError(
      'ESTUARY_STAGE_COLLISION',
      `keys that map to one local path were not copied (the first listed of each was): ${list}; rename them in the store or stage them separately`,
      { exitCode: EXIT.someFailed },
    ),
  interrupted: (line: string, signal: 'SIGINT' | 'SIGTERM') =>
    stageError('ESTUARY_STAGE_INTERRUPTED', line, { exitCode: signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm }),
} as const;

const exitTable: DocTable = {
  columns: ['exit status', 'meaning'],
  rows: Object.entries(EXIT).map(([name, status]) => [`\`${status}\``, EXIT_MEANINGS[name as keyof typeof EXIT]]),
};

/** This role's part of docs/ERRORS.md. */
export const stageErrorsDoc: ErrorsSection = {
  title: 'stage',
  intro:
    '`estuary stage` exits 2 with one of the first group before it copies anything (or, for a listing that turns out too long, after the files in flight finish). A file that fails during a transfer is listed in the summary (and logged) and the exit status is 1.',
  tables: [exitTable, codeTable(STAGE_CODES, ['code', 'when', 'what to do'])],
};
