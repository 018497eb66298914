import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    // Integration tests start real servers and mounts; forks isolate their process state.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: more files at once only makes the real-service tests contend.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
