import { z } from 'zod';
import { messageOf, PorterError } from '../../errors.js';
import type { Outcome } from '../outcome.js';
import { SettledMemory, type SettledId } from './settled-memory.js';

export type { Outcome } from '../outcome.js';

/**
 * What the journal holds and how its append-only log is read back. Pure: no file access here, so
 * the replay rules (including what a crash may leave at the end of the log) are tested on strings.
 */

export interface JournalEntry {
  readonly serverId: string;
  readonly id: string;
  /**
   * The store the command was claimed for ("default": the store of `api`), so that it can be
   * reported through that store once its server is no longer configured. Journals written before
   * porter recorded it have none.
   */
  readonly store?: string;
  readonly command?: string;
  readonly claimedAt: number;
  readonly outcome?: Outcome;
  readonly outcomeAt?: number;
}

export type Entries = Record<string, JournalEntry>;

/** What the journal knows: the commands still owed a report, and the ids settled lately. */
export interface JournalState {
  readonly entries: Entries;
  readonly settled: SettledMemory;
}

/** One line of the log. */
export type JournalRecord =
  | {
      readonly op: 'claim';
      readonly serverId: string;
      readonly id: string;
      readonly store?: string;
      readonly command?: string;
      readonly at: number;
    }
  | { readonly op: 'outcome'; readonly serverId: string; readonly id: string; readonly outcome: Outcome; readonly at: number }
  | { readonly op: 'settle'; readonly serverId: string; readonly id: string; readonly at?: number };

/** The journal's files could not be read back; nothing was changed on disk. */
export class JournalReadError extends PorterError {
  override readonly code = 'E_JOURNAL_READ';
}

const outcomeSchema = z.discriminatedUnion('result', [
  z.object({ result: z.literal('done') }),
  z.object({ result: z.literal('failed'), reason: z.string() }),
]);
const key = { serverId: z.string().min(1), id: z.string().min(1) };
const recordSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('claim'), ...key, store: z.string().optional(), command: z.string().optional(), at: z.number() }),
  z.object({ op: z.literal('outcome'), ...key, outcome: outcomeSchema, at: z.number() }),
  // Logs written before the settled-id memory have no `at`; their entries' own times stand in.
  z.object({ op: z.literal('settle'), ...key, at: z.number().optional() }),
]);

export function keyOf(serverId: string, id: string): string {
  return `${serverId}/${id}`;
}

export function encodeRecord(record: JournalRecord): string {
  return `${JSON.stringify(record)}\n`;
}

/**
 * Applies one record in place. Replaying a log over the snapshot it was started from gives the
 * state at the log's last record.
 */
export function applyRecord(state: JournalState, record: JournalRecord): void {
  const { entries } = state;
  const k = keyOf(record.serverId, record.id);
  switch (record.op) {
    case 'claim':
      entries[k] = {
        serverId: record.serverId,
        id: record.id,
        ...(record.store === undefined ? {} : { store: record.store }),
        ...(record.command === undefined ? {} : { command: record.command }),
        claimedAt: record.at,
      };
      return;
    case 'outcome': {
      const claimed = entries[k];
      if (!claimed) throw new Error(`an outcome for command ${record.id} (server ${record.serverId}) that was never claimed`);
      entries[k] = { ...claimed, outcome: record.outcome, outcomeAt: record.at };
      return;
    }
    case 'settle': {
      const settled = entries[k];
      if (!settled) return;
      delete entries[k];
      state.settled.remember({
        serverId: record.serverId,
        id: record.id,
        // Only a claim whose report the API accepted is settled, and every report has an outcome.
        outcome: settled.outcome ?? { result: 'failed', reason: 'outcome unknown' },
        settledAt: record.at ?? settled.outcomeAt ?? settled.claimedAt,
      });
    }
  }
}

/**
 * Replays log text onto `entries`. A record is acted on only once its line is synced, so a crash
 * can leave at most the last line unfinished (cut short, or zeros where the file system had not
 * written the data yet): that line is dropped, because nothing was done on the strength of it. A
 * bad line anywhere else means the file was damaged, and porter refuses to guess.
 */
export function replayLog(state: JournalState, text: string, file: string): void {
  const lines = text.split('\n');
  // A file that ends with a newline splits into a last, empty element; anything else there is unfinished.
  const unfinished = lines.pop() ?? '';
  for (const [index, line] of lines.entries()) {
    const record = parseLine(line);
    if (record === undefined) {
      if (index === lines.length - 1 && unfinished === '') return;
      throw damaged(file, index + 1, 'is not a journal record');
    }
    try {
      applyRecord(state, record);
    } catch (error) {
      throw damaged(file, index + 1, messageOf(error));
    }
  }
}

function parseLine(line: string): JournalRecord | undefined {
  try {
    const parsed = recordSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function damaged(file: string, line: number, what: string): JournalReadError {
  return new JournalReadError(
    `the delivery journal ${file} is damaged at line ${line} (${what}): porter will not guess which commands are still owed a report. ` +
      'Keep a copy of the file, read the commands it lists, settle them from the store dashboard, then move the file away and start porter again',
  );
}

const settledSchema = z.object({ ...key, outcome: outcomeSchema, settledAt: z.number() });
const entrySchema = z.object({
  ...key,
  store: z.string().optional(),
  command: z.string().optional(),
  claimedAt: z.number(),
  outcome: outcomeSchema.optional(),
  outcomeAt: z.number().optional(),
});
const snapshotSchema = z.object({
  generation: z.number().int().nonnegative(),
  entries: z.record(z.string(), entrySchema),
  settled: z.array(settledSchema).default([]),
});

/** What the snapshot (journal.json) holds: the state as of the start of log `generation`. */
interface Snapshot {
  readonly generation: number;
  readonly state: JournalState;
}

export function encodeSnapshot(generation: number, entries: Entries, settled: readonly SettledId[]): string {
  return JSON.stringify({ generation, entries, settled });
}

/** Reads journal.json; undefined when the text is not a snapshot porter wrote. */
export function decodeSnapshot(text: string, settled: SettledMemory): Snapshot | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = snapshotSchema.safeParse(value);
  if (!parsed.success) return undefined;
  for (const entry of parsed.data.settled) settled.remember(entry);
  return { generation: parsed.data.generation, state: { entries: parsed.data.entries, settled } };
}
