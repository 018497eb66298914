// What a drone is told about itself through its environment: the same names for a `command`
// site's start command and a `netns` instance's boot script, so one script serves both.

import type { DroneSpec } from './types.ts';

export function droneEnv(spec: DroneSpec): Record<string, string> {
  return {
    ESTUARY_DRONE_ID: spec.id,
    ESTUARY_DRONE_SITE: spec.site,
    ESTUARY_DRONE_TYPE: spec.machineType,
    ESTUARY_DRONE_CORES: String(spec.cores),
    ESTUARY_DRONE_MEMORY_MB: String(spec.memoryMb),
    ESTUARY_DRONE_FEATURES: spec.features.join(','),
  };
}
