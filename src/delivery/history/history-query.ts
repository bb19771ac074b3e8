import { UsageError } from '../../errors.js';
import type { HistoryRecord } from './history-record.js';

/**
 * The filters of `porter history` and of /history, one parser for both so that a flag and its
 * query parameter accept exactly the same values (docs/operations.md#what-happened-to-a-purchase).
 */

interface HistoryQuery {
  /** A player name (or identifier) the command text names as a whole word, in any case. */
  readonly player?: string;
  readonly id?: string;
  readonly failedOnly: boolean;
  /** Records at or after this time (ms since the epoch). */
  readonly since?: number;
  /** The newest this many of the records that match. */
  readonly limit: number;
}

/** The values as typed: flags from the command line, or the parameters of a /history URL. */
export interface RawHistoryQuery {
  readonly player?: string | undefined;
  readonly id?: string | undefined;
  readonly failed?: string | boolean | undefined;
  readonly since?: string | undefined;
  readonly limit?: string | undefined;
}

export const DEFAULT_HISTORY_LIMIT = 50;
const MAX_HISTORY_LIMIT = 100_000;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** How each filter is named in messages: `--since` on the command line, `since` in a URL. */
type Naming = (filter: keyof RawHistoryQuery) => string;

/** Throws UsageError naming the filter, what it got and what it accepts. */
export function parseHistoryQuery(raw: RawHistoryQuery, now: number, name: Naming): HistoryQuery {
  const player = raw.player?.trim();
  if (player !== undefined && (player === '' || /[\r\n\0]/.test(player))) {
    throw new UsageError(`${name('player')} ${JSON.stringify(raw.player)}: expected a player name such as Steve`);
  }
  if (raw.id !== undefined && !/^-?\d{1,20}$/.test(raw.id)) {
    throw new UsageError(
      `${name('id')} ${JSON.stringify(raw.id)}: expected a command id, the digits the store shows (e.g. 9007199254740993)`,
    );
  }
  return {
    ...(player === undefined ? {} : { player }),
    ...(raw.id === undefined ? {} : { id: raw.id }),
    failedOnly: parseSwitch(raw.failed, name),
    ...(raw.since === undefined ? {} : { since: parseSince(raw.since, now, name) }),
    limit: parseLimit(raw.limit, name),
  };
}

/** The records that match, oldest first, at most `limit` of them: the newest. */
export function selectHistory(records: readonly HistoryRecord[], query: HistoryQuery): HistoryRecord[] {
  const names = query.player === undefined ? undefined : namesPlayer(query.player);
  const matching = records.filter(
    (record) =>
      (query.since === undefined || Date.parse(record.at) >= query.since) &&
      (query.id === undefined || record.id === query.id) &&
      (!query.failedOnly || record.outcome === 'failed') &&
      (names === undefined || (record.command !== undefined && names(record.command))),
  );
  return matching.slice(-query.limit);
}

/**
 * The Seller API's claim carries only an id and the command text (docs/design.md#the-api-contract),
 * so a player is found where the store put them: in the command. Whole words only, in any case,
 * so "Steve" finds `give steve diamond` and `lp user Steve parent add vip`, never `give Steven …`.
 */
function namesPlayer(player: string): (command: string) => boolean {
  const escaped = player.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])${escaped}(?![\\p{L}\\p{N}_])`, 'iu');
  return (command) => pattern.test(command);
}

function parseSince(text: string, now: number, name: Naming): number {
  const trimmed = text.trim();
  const duration = /^(\d{1,9})\s*([smhd])$/i.exec(trimmed);
  if (duration) return now - Number(duration[1]) * UNIT_MS[duration[2]!.toLowerCase()]!;
  const at = /^\d{4}-\d{2}-\d{2}([T ]\S+)?$/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new UsageError(
      `${name('since')} ${JSON.stringify(text)}: expected a time back from now such as 30s, 15m, 2h or 7d, or an ISO time such as 2026-01-31T18:00:00Z`,
    );
  }
  return at;
}

function parseLimit(text: string | undefined, name: Naming): number {
  if (text === undefined) return DEFAULT_HISTORY_LIMIT;
  const limit = /^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_HISTORY_LIMIT)) {
    throw new UsageError(`${name('limit')} ${JSON.stringify(text)}: expected a whole number from 1 to ${MAX_HISTORY_LIMIT}`);
  }
  return limit;
}

/** A flag on the command line; in a URL `failed`, `failed=1` or `failed=true` (and `0` / `false` to say no). */
function parseSwitch(value: string | boolean | undefined, name: Naming): boolean {
  if (value === undefined || typeof value === 'boolean') return value ?? false;
  const text = value.trim().toLowerCase();
  if (text === '' || text === '1' || text === 'true') return true;
  if (text === '0' || text === 'false') return false;
  throw new UsageError(`${name('failed')} ${JSON.stringify(value)}: expected true or false (or no value at all)`);
}
