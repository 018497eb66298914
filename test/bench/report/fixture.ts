// A scenario result shaped like a real fuse run, for the report tests.

import { scenarioRecord } from '../../../bench/results.ts';
import type { ScenarioResult } from '../../../bench/scenario.ts';

export const fuseResult: ScenarioResult = {
  scenario: 'fuse',
  settings: { runs: 3 },
  baseline: 's3fs',
  reference: 'sdk-alone',
  method: ['cp up: time of cp plus the unmount'],
  peers: [
    { peer: 'estuary', status: 'ok', version: 'estuary' },
    { peer: 's3fs', status: 'ok', version: 's3fs 1.90' },
    { peer: 'goofys', status: 'skipped', reason: 'goofys not on PATH' },
    { peer: 'rclone', status: 'failed', reason: 'cp 1×1000MB: cp failed: Input/output error' },
    { peer: 'sdk-alone', status: 'ok' },
  ],
  measurements: [
    { case: 'cp up 1000×1MB', peer: 's3fs', metric: 'transferRate', samples: [10, 12, 11] },
    { case: 'cp up 1000×1MB', peer: 'estuary', metric: 'transferRate', samples: [22, 20, 21] },
    { case: 'cp up 1000×1MB', peer: 'sdk-alone', metric: 'transferRate', samples: [44, 40, 42] },
    { case: 'cp up 1×1000MB', peer: 's3fs', metric: 'transferRate', samples: [50, 50, 50] },
    { case: 'cp up 1×1000MB', peer: 'estuary', metric: 'transferRate', samples: [85, 85, 85] },
    { case: 'cp up 1×1000MB', peer: 'sdk-alone', metric: 'transferRate', samples: [50, 50, 50] },
    { case: 'rss up 1000×1MB', peer: 's3fs', metric: 'peakMemory', samples: [100, 100, 100] },
    { case: 'rss up 1000×1MB', peer: 'estuary', metric: 'peakMemory', samples: [720, 720, 720] },
    { case: 'cp down 1000×1MB', peer: 's3fs', metric: 'transferRate', samples: [30, 30, 30] },
    { case: 'ls -l 1000 files', peer: 's3fs', metric: 'duration', samples: [0.8, 0.79] },
    {
      case: 'ls -l 1000 files',
      peer: 'estuary',
      metric: 'duration',
      samples: [0.2, 0.2],
    },
    { case: 'time to first byte', peer: 's3fs', metric: 'duration', samples: [0.134] },
  ],
  notes: ['a note <with> markup & such'],
};

export const fuseRecord = scenarioRecord(fuseResult, {
  durationSeconds: 12.5,
  load: { start: [0.5, 0.4, 0.3], end: [0.7, 0.5, 0.3] },
  interleaving: { cases: 3, problems: [] },
});
