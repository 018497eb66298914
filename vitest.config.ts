import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    // Integration tests start real servers and mounts; forks isolate their process state.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Three files at once on two cores: many tests wait on real servers, mounts and clocks, and
    // with two the cores sat idle a third of the time (the suite took 1,073 s with two, 779 s with
    // three, on the same machine).
    maxWorkers: 3,
    reporters: ['default'],
  },
});
