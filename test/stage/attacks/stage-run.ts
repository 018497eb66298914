// Runs `estuary stage` as a user would (bin/estuary.js under this Node), in a child process
// tracked for teardown, against a store with throwaway keys.

import { fileURLToPath } from 'node:url';
import { NODE, startChild, type Child } from '../../helpers/process.ts';

export const ESTUARY = fileURLToPath(new URL('../../../bin/estuary.js', import.meta.url));

export interface Ran {
  code: number | null;
  out: string;
  /** The closing JSON summary (stdout is not a terminal), when there is one. */
  summary?: Record<string, unknown> & { copied: number; skipped: number; failed: { rel: string; error: string }[] };
}

export function stageChild(args: readonly string[], env: Record<string, string> = {}): Child {
  return startChild(NODE, [ESTUARY, 'stage', ...args], {
    env: { ...process.env, AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK', AWS_EC2_METADATA_DISABLED: 'true', ...env },
  });
}

export async function stage(args: readonly string[], env: Record<string, string> = {}): Promise<Ran> {
  const child = stageChild(args, env);
  const code = await child.exited;
  const out = child.output();
  const line = out.split('\n').find((l) => l.startsWith('{"direction"'));
  return { code, out, summary: line ? JSON.parse(line) : undefined };
}
