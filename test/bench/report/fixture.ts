// A scenario result shaped like a real fuse run, for the report tests.

import { scenarioRecord } from '../../../bench/results.ts';
import type { ScenarioResult } from '../../../bench/scenario.ts';

export const fuseResult: ScenarioResult = {
  scenario: 'fuse',
  settings: { runs: 3, limitPeer: 'sdk-limit' },
  baseline: 's3fs',
  peers: [
    { peer: 'estuary', status: 'ok', version: 'estuary' },
    { peer: 's3fs', status: 'ok', version: 's3fs 1.90' },
    { peer: 'goofys', status: 'skipped', reason: 'goofys not on PATH' },
    { peer: 'rclone', status: 'failed', reason: 'cp 1×1000MB: cp failed: Input/output error' },
    { peer: 'sdk-limit', status: 'ok' },
  ],
  measurements: [
    { case: 'cp up 1000×1MB', peer: 's3fs', unit: 'MB/s', higherIsBetter: true, samples: [10, 12, 11] },
    { case: 'cp up 1000×1MB', peer: 'estuary', unit: 'MB/s', higherIsBetter: true, samples: [22, 20, 21] },
    { case: 'cp up 1000×1MB', peer: 'sdk-limit', unit: 'MB/s', higherIsBetter: true, samples: [44, 40, 42] },
    { case: 'cp up 1×1000MB', peer: 's3fs', unit: 'MB/s', higherIsBetter: true, samples: [50, 50, 50] },
    { case: 'cp up 1×1000MB', peer: 'estuary', unit: 'MB/s', higherIsBetter: true, samples: [85, 85, 85] },
    { case: 'cp down 1000×1MB', peer: 's3fs', unit: 'MB/s', higherIsBetter: true, samples: [30, 30, 30] },
    { case: 'ls -l 1000 files', peer: 's3fs', unit: 'seconds', higherIsBetter: false, samples: [0.8, 0.79] },
    {
      case: 'ls -l 1000 files',
      peer: 'estuary',
      unit: 'seconds',
      higherIsBetter: false,
      samples: [0.2, 0.2],
    },
    { case: 'time to first byte', peer: 's3fs', unit: 'seconds', higherIsBetter: false, samples: [0.134] },
  ],
  notes: ['a note <with> markup & such'],
};

export const fuseRecord = scenarioRecord(fuseResult, 12.5);
