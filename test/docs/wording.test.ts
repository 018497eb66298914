// The docs speak of the project: what it does, how to run it, what was measured. Words about how
// it was asked for or made ("the issue's target", "the task") mean nothing to someone who
// installs it, and would go stale. Every Markdown page under docs/, the README and deploy/.

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

const FORBIDDEN = [
  /\bthe issue\b/i,
  /\bissue's\b/i,
  /\bissues? #?\d+/i,
  /\b(the|this|our) task\b/i,
  /\bthe brief\b/i,
  /\bas asked\b/i,
];

async function pages(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, 'docs'), { recursive: true })).map((f) => join('docs', f));
  const deploy = (await readdir(join(ROOT, 'deploy'), { recursive: true })).map((f) => join('deploy', f));
  return ['README.md', ...docs, ...deploy].filter((f) => /\.(md|service|timer|txt)$/.test(f));
}

describe('the docs', () => {
  it('speak of the project, never of issues or tasks it came from', async () => {
    const found: string[] = [];
    for (const file of await pages()) {
      const text = await readFile(join(ROOT, file), 'utf8');
      for (const [i, line] of text.split('\n').entries()) {
        for (const re of FORBIDDEN) if (re.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      }
    }
    expect(found).toEqual([]);
  });
});
