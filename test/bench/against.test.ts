import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { compareRounds, comparisonTable, roundOrder } from '../../bench/lib/against.js';
import { figure } from '../../bench/lib/figure.js';
import { THIS_BUILD } from '../../bench/lib/porter-process.js';
import { fcOptions } from '../helpers/fc-options.js';

const cpu = (value: number) => figure('fleet.cpu', 'idle CPU', '%', [value]);
const rss = (value: number) => figure('fleet.rss', 'RSS idle', 'MB', [value]);

describe('npm run bench -- --against: the comparison of two builds', () => {
  test("a round's ratio is taken within the round: a machine twice as busy in one round moves both builds alike", () => {
    const rows = compareRounds([
      { a: [cpu(12), rss(150)], b: [cpu(10), rss(150)] },
      { a: [cpu(24), rss(160)], b: [cpu(20), rss(160)] },
      { a: [cpu(13.2), rss(170)], b: [cpu(11), rss(170)] },
    ]);
    const fleetCpu = rows.find((r) => r.key === 'fleet.cpu')!;
    assert.equal(fleetCpu.ratio, 1.2);
    assert.deepEqual(
      fleetCpu.spread.map((v) => v.toFixed(6)),
      ['1.200000', '1.200000'],
    );
    assert.equal(fleetCpu.a, 13.2);
    assert.equal(fleetCpu.b, 11);
    assert.equal(fleetCpu.rounds, 3);
    assert.equal(rows.find((r) => r.key === 'fleet.rss')!.ratio, 1);
  });

  test('a figure one build lacks (a benchmark that failed on it, or a figure it does not make) is left out, not guessed', () => {
    const rows = compareRounds([
      { a: [cpu(12), rss(150)], b: [cpu(10)] },
      { a: [cpu(11)], b: [] },
    ]);
    assert.deepEqual(
      rows.map((r) => [r.key, r.rounds]),
      [['fleet.cpu', 1]],
    );
  });

  test('the median ratio lies within the spread, the spread within every round, for any rounds', () => {
    const value = fc.double({ min: 0.01, max: 1e6, noNaN: true });
    fc.assert(
      fc.property(fc.array(fc.tuple(value, value), { minLength: 1, maxLength: 9 }), (pairs) => {
        const [row] = compareRounds(pairs.map(([a, b]) => ({ a: [cpu(a)], b: [cpu(b)] })));
        const ratios = pairs.map(([a, b]) => a / b);
        assert.ok(row!.spread[0] <= row!.ratio && row!.ratio <= row!.spread[1]);
        assert.equal(row!.spread[0], Math.min(...ratios));
        assert.equal(row!.spread[1], Math.max(...ratios));
        assert.ok(ratios.includes(row!.ratio), 'the median is a ratio some round measured');
      }),
      fcOptions({ numRuns: 200 }),
    );
  });

  test('the builds take turns going first, so neither always meets the warmer machine', () => {
    const firsts = [0, 1, 2, 3].map((round) => roundOrder(round, 'a', 'b')[0]);
    assert.deepEqual(firsts, ['a', 'b', 'a', 'b']);
  });

  test('the table names both builds and shows the ratio and its spread', () => {
    const rows = compareRounds([{ a: [cpu(12)], b: [cpu(10)] }]);
    const table = comparisonTable(rows, THIS_BUILD, { label: 'main~3 (abc1234)', main: '/x', nodeFlags: [] });
    assert.match(table, /this tree/);
    assert.match(table, /main~3 \(abc1234\)/);
    assert.match(table, /idle CPU\s+12 %\s+10 %\s+1\.200\s+1\.200–1\.200 \(1 rounds\)/);
  });
});
