// vitest's sequencer for this suite: the longest test files first (as vitest itself orders files
// once its cache knows their durations), taking durations from the cache when it has them and
// from test/durations.json when it does not, as on a clean clone.

import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { readDurations, UNLISTED_MS } from './durations.ts';

export default class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const table = readDurations();
    const root = this.ctx.config.root;
    const ms = (f: TestSpecification): number => {
      const path = relative(root, f.moduleId);
      return this.ctx.cache.getFileTestResults(`${f.project.name}:${path}`)?.duration ?? table[path] ?? UNLISTED_MS;
    };
    return Promise.resolve([...files].sort((a, b) => ms(b) - ms(a)));
  }
}
