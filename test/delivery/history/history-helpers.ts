import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { SettledDelivery } from '../../../src/delivery/history/history-record.js';

/** Shared by the delivery history's tests: a state directory, deliveries numbered in order, a logger that keeps its lines. */

export const SERVER_ID = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
/** Above 2^53, so a record that went through a JSON number would show it. */
const FIRST_ID = 9007199254740993n;

export function stateDir(dirs: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'porter-history-'));
  dirs.push(dir);
  return dir;
}

export function removeAll(dirs: string[]): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The n-th delivery: command id FIRST_ID + n, so ids say the order they were recorded in. */
export function delivery(n: number, overrides: Partial<SettledDelivery> = {}): SettledDelivery {
  return {
    serverId: SERVER_ID,
    serverName: 'survival',
    id: idOf(n),
    command: `give Steve diamond ${n}`,
    outcome: { result: 'done' },
    answer: `Gave ${n} [Diamond] to Steve`,
    ms: 12,
    at: Date.UTC(2026, 0, 1) + n * 1000,
    ...overrides,
  };
}

export function idOf(n: number): string {
  return (FIRST_ID + BigInt(n)).toString();
}

export function numberOf(id: string): number {
  return Number(BigInt(id) - FIRST_ID);
}

/** Bytes of history.jsonl plus history.1.jsonl. */
export function historyBytes(dir: string): number {
  return ['history.jsonl', 'history.1.jsonl'].reduce((sum, name) => sum + sizeOf(join(dir, name)), 0);
}

export function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function historyText(dir: string): string {
  try {
    return readFileSync(join(dir, 'history.jsonl'), 'utf8');
  } catch {
    return '';
  }
}

export interface LogLine {
  readonly level: number;
  /** The line's event (docs/operations.md#log-events): what tests find a line by. */
  readonly event: string;
  readonly [key: string]: unknown;
}

export function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}
