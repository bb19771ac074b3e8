import { median } from './stats.js';

/** A figure's goal: measured and shown, never asserted. */
export interface Target {
  readonly op: '<=' | '>=' | '<' | '==';
  readonly value: number;
  /** How the goal is written, e.g. "≤ 0.55 × idleMs + 50 ms". */
  readonly text: string;
}

export interface Figure {
  /** Stable key, e.g. "drain.efficiency". */
  readonly key: string;
  readonly label: string;
  readonly unit: string;
  /** Median of `runs`. */
  readonly value: number;
  /** One value per run (or per segment, where a run is split into segments). */
  readonly runs: readonly number[];
  readonly target?: Target;
  /** Undefined when there is no target. */
  readonly pass?: boolean;
  readonly note?: string;
}

export interface BenchResult {
  readonly name: string;
  readonly figures: readonly Figure[];
  /** Raw material for a diagnosis: timelines, per-run breakdowns. */
  readonly detail: Record<string, unknown>;
}

function meets(value: number, target: Target): boolean {
  switch (target.op) {
    case '<=':
      return value <= target.value;
    case '<':
      return value < target.value;
    case '>=':
      return value >= target.value;
    case '==':
      return value === target.value;
  }
}

export function figure(
  key: string,
  label: string,
  unit: string,
  runs: readonly number[],
  extra: { target?: Target; note?: string; value?: number } = {},
): Figure {
  const value = extra.value ?? median(runs);
  return {
    key,
    label,
    unit,
    value,
    runs,
    ...(extra.target ? { target: extra.target, pass: meets(value, extra.target) } : {}),
    ...(extra.note ? { note: extra.note } : {}),
  };
}
