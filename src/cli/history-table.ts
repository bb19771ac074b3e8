import type { HistoryRecord } from '../delivery/history/history-record.js';

/**
 * `porter history` as a table a person reads in a terminal: one line per delivery, long texts cut
 * (`--json` has them whole). Command texts and answers carry buyers' text, so control characters
 * (an ANSI escape in a nickname) are shown escaped, never sent to the terminal.
 */

const COMMAND_POINTS = 48;
const TEXT_POINTS = 64;
const HEADINGS = ['TIME (UTC)', 'SERVER', 'ID', 'OUTCOME', 'MS', 'COMMAND', 'ANSWER / REASON'];

export function historyTable(records: readonly HistoryRecord[]): string {
  const rows = records.map((record) => [
    record.at.replace(/\.\d+Z$/, 'Z'),
    shown(record.server ?? record.serverId, 40),
    record.id,
    record.outcome === 'executed' ? 'executed' : `failed (${record.why ?? 'unknown'})`,
    record.ms === null ? '-' : String(record.ms),
    shown(record.command ?? '(no command text)', COMMAND_POINTS),
    shown(
      record.reportRefused !== undefined
        ? `report refused by the API (${record.reportRefused}), given up`
        : record.outcome === 'executed'
          ? (record.answer ?? '')
          : (record.reason ?? ''),
      TEXT_POINTS,
    ),
  ]);
  const all = [HEADINGS, ...rows];
  const widths = HEADINGS.map((_, column) => Math.max(...all.map((row) => Array.from(row[column]!).length)));
  return all
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell + ' '.repeat(widths[column]! - Array.from(cell).length)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** At most `max` code points, control and bidirectional-override characters escaped. */
function shown(text: string, max: number): string {
  const safe = text.replace(/[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
  const points = Array.from(safe);
  return points.length <= max ? safe : `${points.slice(0, max - 1).join('')}…`;
}
