import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { readHistory } from '../../src/delivery/history/history-file.js';
import type { HistoryRecord } from '../../src/delivery/history/history-record.js';
import { historyAnswer } from '../../src/health/history-route.js';
import { startHealthServer, type HealthServer } from '../../src/health/server.js';
import { refusalOf } from '../helpers/odd-files.js';
import { fakeDaemon, fakeServer, manualClock } from './fakes.js';
import { SecretBook } from '../../src/secret-book.js';

/** GET /history: the delivery history as JSON, the CLI's filters as query parameters, on loopback only. */

const SURVIVAL = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
const TOKEN = 'gci_history_route_token_9c2e';
const NOW = Date.UTC(2026, 0, 31, 20, 0, 0);

function record(id: string, minutesAgo: number, command: string, failed?: { why: HistoryRecord['why']; reason: string }): HistoryRecord {
  return {
    at: new Date(NOW - minutesAgo * 60_000).toISOString(),
    serverId: SURVIVAL,
    server: 'survival',
    id,
    command,
    ...(failed ? { outcome: 'failed', why: failed.why, reason: failed.reason } : { outcome: 'executed', answer: 'done' }),
    ms: 10,
  };
}

const RECORDS: HistoryRecord[] = [
  record('1', 300, 'lp user Steve parent add vip'),
  record('2', 90, 'give Nobody dirt 1', { why: 'game-answer', reason: 'the game answered: No player was found' }),
  record('3', 60, 'give Steven diamond 1'),
  record('4', 30, 'op steve', { why: 'refused', reason: `refused, not sent: token ${TOKEN} in the rule` }),
  record('5', 1, 'eco give STEVE 1000'),
];

describe('GET /history on a loopback health port', () => {
  let health: HealthServer;
  const daemon = { ...fakeDaemon([fakeServer(SURVIVAL, 'survival').part], '/nonexistent'), history: { read: async () => RECORDS } };

  before(async () => {
    const clock = manualClock(NOW);
    health = await startHealthServer({
      listen: '127.0.0.1:0',
      daemon,
      logger: pino({ level: 'silent' }),
      clock,
      secrets: new SecretBook([TOKEN]),
    });
  });
  after(() => health.close());

  async function get(query: string, method = 'GET') {
    const response = await fetch(`http://127.0.0.1:${health.port}/history${query}`, { method, signal: AbortSignal.timeout(5000) });
    const text = await response.text();
    return { status: response.status, type: response.headers.get('content-type') ?? '', text };
  }
  const ids = async (query: string) => {
    const answer = await get(query);
    assert.equal(answer.status, 200, answer.text);
    return (JSON.parse(answer.text) as { records: HistoryRecord[] }).records.map((r) => r.id);
  };

  test('every record, oldest first, as JSON; secrets blanked out', async () => {
    const answer = await get('');
    assert.equal(answer.status, 200);
    assert.match(answer.type, /^application\/json/);
    const body = JSON.parse(answer.text) as { records: HistoryRecord[] };
    assert.deepEqual(
      body.records.map((r) => r.id),
      ['1', '2', '3', '4', '5'],
    );
    assert.ok(!answer.text.includes(TOKEN));
    assert.equal(body.records[3]?.reason, 'refused, not sent: token [Redacted] in the rule');
  });

  test('the filters of porter history, as query parameters', async () => {
    assert.deepEqual(await ids('?player=steve'), ['1', '4', '5'], 'whole word, any case: not Steven');
    assert.deepEqual(await ids('?failed'), ['2', '4']);
    assert.deepEqual(await ids('?failed=true&player=Steve'), ['4']);
    assert.deepEqual(await ids('?failed=false'), ['1', '2', '3', '4', '5']);
    assert.deepEqual(await ids('?since=45m'), ['4', '5']);
    assert.deepEqual(await ids(`?since=${new Date(NOW - 61 * 60_000).toISOString()}`), ['3', '4', '5']);
    assert.deepEqual(await ids('?id=3'), ['3']);
    assert.deepEqual(await ids('?limit=2'), ['4', '5'], 'the newest');
  });

  test('a value it cannot use, or an unknown parameter, is a 400 naming it', async () => {
    for (const [query, named] of [
      ['?since=yesterday', /query parameter since "yesterday": expected a time back from now such as 30s/],
      ['?limit=0', /query parameter limit "0": expected a whole number from 1 to 100000/],
      ['?id=abc', /query parameter id "abc": expected a command id/],
      ['?failed=maybe', /query parameter failed "maybe": expected true or false/],
      ['?playr=Steve', /unknown query parameter playr: use player, id, failed, since, limit/],
    ] as const) {
      const answer = await get(query);
      assert.equal(answer.status, 400, query);
      assert.match((JSON.parse(answer.text) as { error: string }).error, named);
    }
  });

  test('HEAD answers without a body', async () => {
    const answer = await get('', 'HEAD');
    assert.equal(answer.status, 200);
    assert.equal(answer.text, '');
  });
});

describe('GET /history elsewhere', () => {
  const daemon = { ...fakeDaemon([], '/nonexistent'), history: { read: async () => RECORDS } };

  test('403 with the reason when health.listen is not a loopback address: command texts name buyers', async () => {
    const answer = await historyAnswer(daemon, new URLSearchParams('player=Steve'), { onLoopback: false, now: NOW });
    assert.equal(answer.status, 403);
    assert.match(
      (JSON.parse(answer.body) as { error: string }).error,
      /^\/history is served only when health.listen is a loopback address: it shows command texts, which name your buyers/,
    );
    assert.ok(!answer.body.includes('lp user'));
  });

  test('500 naming the file when the history cannot be read (a directory in place of history.jsonl), not a generic error', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'porter-history-route-'));
    try {
      const path = join(stateDir, 'history.jsonl');
      mkdirSync(path);
      const reading = { ...fakeDaemon([], stateDir), history: { read: () => readHistory(stateDir) } };
      const answer = await historyAnswer(reading, new URLSearchParams(), { onLoopback: true, now: NOW });
      assert.equal(answer.status, 500);
      assert.match((JSON.parse(answer.body) as { error: string }).error, refusalOf(path, 'directory'));
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  test('404 from a daemon that keeps no history', async () => {
    const answer = await historyAnswer(fakeDaemon([], '/nonexistent'), new URLSearchParams(), { onLoopback: true, now: NOW });
    assert.equal(answer.status, 404);
  });
});
