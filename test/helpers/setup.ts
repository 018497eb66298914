// Runs in every test file (vitest setupFiles): whatever a test registered with onTeardown is torn
// down after the file, passed or failed. A hook registered lazily from inside a test would be
// ignored by vitest, hence this file-level one.

import { afterAll } from 'vitest';
import { runTeardowns } from './cleanup.ts';

afterAll(runTeardowns);
