import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UsageError } from '../../../src/errors.js';
import { parseHistoryQuery, selectHistory } from '../../../src/delivery/history/history-query.js';
import type { HistoryRecord } from '../../../src/delivery/history/history-record.js';

/** The filters `porter history` and /history share. */

const NOW = Date.UTC(2026, 0, 31, 20, 0, 0);
const flag = (key: string) => `--${key}`;

function commands(player: string, texts: string[]): string[] {
  const records: HistoryRecord[] = texts.map((command, index) => ({
    at: new Date(NOW).toISOString(),
    serverId: 's',
    id: String(index),
    command,
    outcome: 'executed',
    ms: 1,
  }));
  return selectHistory(records, parseHistoryQuery({ player }, NOW, flag)).map((r) => r.command!);
}

describe('history filters', () => {
  test('--player finds the name as a whole word of the command, in any case', () => {
    const texts = [
      'lp user Steve parent add vip',
      'give steve diamond 1',
      'give Steven diamond 1',
      'give xSteve diamond 1',
      'tellraw @a {"text":"thanks Steve!"}',
      'minecraft:give STEVE emerald 2',
    ];
    assert.deepEqual(commands('Steve', texts), [texts[0], texts[1], texts[4], texts[5]]);
  });

  test('names with characters a regular expression would read, names beyond ASCII, and Steam ids', () => {
    assert.deepEqual(commands('[VIP]Bob', ['kit vip [VIP]Bob', 'kit vip VIPBob']), ['kit vip [VIP]Bob']);
    assert.deepEqual(commands('jörg', ['give Jörg apple 1', 'give Jörgen apple 1']), ['give Jörg apple 1']);
    assert.deepEqual(
      commands('76561198000000001', ['inventory.giveto 76561198000000001 rifle.ak 1', 'inventory.giveto 765611980000000012 wood 1']),
      ['inventory.giveto 76561198000000001 rifle.ak 1'],
    );
  });

  test('--since takes 30s, 15m, 2h, 7d or an ISO time', () => {
    const since = (text: string) => parseHistoryQuery({ since: text }, NOW, flag).since;
    assert.equal(since('30s'), NOW - 30_000);
    assert.equal(since('15m'), NOW - 900_000);
    assert.equal(since('2h'), NOW - 7_200_000);
    assert.equal(since('7d'), NOW - 604_800_000);
    assert.equal(since('2026-01-31T18:00:00Z'), Date.UTC(2026, 0, 31, 18));
    assert.equal(since('2026-01-31'), Date.UTC(2026, 0, 31));
  });

  test('a value it cannot use is a UsageError (exit 64) naming the flag and what it takes', () => {
    for (const [raw, message] of [
      [{ since: 'yesterday' }, /^--since "yesterday": expected a time back from now such as 30s, 15m, 2h or 7d/],
      [{ since: '2h ago' }, /^--since "2h ago"/],
      [{ limit: '-1' }, /^--limit "-1": expected a whole number from 1 to 100000$/],
      [{ limit: '1e3' }, /^--limit "1e3"/],
      [{ id: '12a' }, /^--id "12a": expected a command id/],
      [{ player: '  ' }, /^--player " {2}": expected a player name/],
    ] as const) {
      assert.throws(
        () => parseHistoryQuery(raw, NOW, flag),
        (error: unknown) => error instanceof UsageError && error.exitCode === 64 && message.test(error.message),
      );
    }
  });
});
