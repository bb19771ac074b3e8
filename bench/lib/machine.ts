import { readFileSync } from 'node:fs';
import { availableParallelism, tmpdir, totalmem } from 'node:os';

export interface Machine {
  readonly nproc: number;
  readonly cpuModel: string;
  readonly memoryGb: number;
  readonly node: string;
  readonly platform: string;
  /** Where porter's state (its journal) lived: a tmpfs here hides what the disk costs. */
  readonly tmpdir: string;
}

/** What the figures were measured on: they mean little without it. */
export function describeMachine(): Machine {
  let cpuModel = 'unknown';
  try {
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpuModel;
  } catch {
    // not Linux: keep "unknown"
  }
  return {
    nproc: availableParallelism(),
    cpuModel,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    tmpdir: tmpdir(),
  };
}
