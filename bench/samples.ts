// Collects a scenario's samples as they are measured, in the contract's Measurement shape, and
// forwards each one to the live table when the runner's context offers one. The contract's
// context only promises progress lines; `sample` is an optional extra a scenario may use.

import type { MetricName } from './metrics.ts';
import type { BenchContext, Measurement } from './scenario.ts';

export interface SampleEvent {
  readonly case: string;
  readonly peer: string;
  readonly metric: MetricName;
  readonly value: number;
}

export interface LiveSink {
  sample(event: SampleEvent): void;
}

export function liveSinkOf(ctx: BenchContext): LiveSink | undefined {
  const s = (ctx as unknown as Partial<LiveSink>).sample;
  return typeof s === 'function' ? (ctx as unknown as LiveSink) : undefined;
}

export class SampleBook {
  private readonly rows = new Map<string, { m: Omit<Measurement, 'samples'>; samples: number[] }>();
  private readonly sink: LiveSink | undefined;

  constructor(ctx?: BenchContext) {
    this.sink = ctx ? liveSinkOf(ctx) : undefined;
  }

  add(event: SampleEvent): void {
    const key = `${event.case}\u0000${event.peer}`;
    let row = this.rows.get(key);
    if (!row) {
      row = {
        m: { case: event.case, peer: event.peer, metric: event.metric },
        samples: [],
      };
      this.rows.set(key, row);
    }
    row.samples.push(event.value);
    this.sink?.sample(event);
  }

  measurements(): Measurement[] {
    return [...this.rows.values()].map((r) => ({ ...r.m, samples: [...r.samples] }));
  }
}
