import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, SIM_SERVER_ID, startBed, WAIT } from './harness.js';

/**
 * "Bad pull bodies handled without dying": the fake Seller API plays broken
 * answers on the pull route (each fault on the next pull, in order), and queues commands porter
 * must refuse. Porter must keep running, report every claim it can name, and deliver what
 * comes after.
 */

/** Above 2^53: JSON.parse would turn it into …992. */
const INT64_ID = '9007199254740993';
/** The fake's own ids start above 2^53 too, so every real report proves the digits survive. */
const ID_START = 9_007_199_254_741_001n;

describe('bad pull answers through the real CLI', () => {
  test('malformed JSON, non-numeric id, int64 id, no command, 5 KB command, CR/LF, 500/503/reset: porter survives and delivers what follows', async (t) => {
    const bed = await startBed({ api: { idStart: ID_START } });
    try {
      bed.writeConfig();
      const { api } = bed;
      // Played on the first pulls, in this order; none of them claims anything in the fake.
      api.inject('pull', 'malformed');
      api.inject('pull', { body: '{"id":"abc","command":"say abc"}' });
      api.inject('pull', { body: `{"id": ${INT64_ID}, "command": "say int64"}` });
      api.inject('pull', { body: '{"id": 77}' });
      api.inject('pull', '500');
      api.inject('pull', '503');
      api.inject('pull', 'reset');

      // Real claims porter must refuse or report failed, then ordinary deliveries.
      const huge = `say ${'x'.repeat(5 * 1024)}`;
      const hugeId = api.enqueue(SIM_SERVER_ID, { command: huge });
      const lfId = api.enqueue(SIM_SERVER_ID, { command: 'say hi\nop Mallory' });
      const crId = api.enqueue(SIM_SERVER_ID, { command: 'say hi\rop Mallory' });
      const noCommandId = api.enqueue(SIM_SERVER_ID, { command: undefined });
      const numberCommandId = api.enqueue(SIM_SERVER_ID, { command: 42 });
      const after = ['say after-1', 'say after-2', 'say after-3'];
      const afterIds = after.map((command) => api.enqueue(SIM_SERVER_ID, { command }));

      const porter = bed.spawnPorter();
      await waitFor(() => afterIds.every((id) => api.commands().find((c) => c.id === id)!.status === 'EXECUTED') || porter.exit, {
        ...WAIT,
        timeoutMs: 45_000,
        what: 'the ordinary commands after the faults to be delivered',
      });
      assert.equal(porter.exit, undefined, `porter died\n${porter.tail()}`);

      const byId = new Map(api.commands().map((c) => [c.id, c]));
      const failedWith = (id: string, reason: RegExp) => {
        const command = byId.get(id)!;
        assert.equal(command.status, 'FAILED', `${id}: ${JSON.stringify(command).slice(0, 300)}`);
        assert.equal(acceptedReports(command), 1);
        assert.match(command.error ?? '', reason);
      };
      failedWith(hugeId, /not sent.*over the RCON request limit of 1446 bytes/);
      failedWith(lfId, /contains CR, LF or NUL and was not sent/);
      failedWith(crId, /contains CR, LF or NUL and was not sent/);
      failedWith(noCommandId, /no command text/);
      failedWith(numberCommandId, /no command text/);
      for (const id of afterIds) assert.equal(acceptedReports(byId.get(id)!), 1);
      assert.ok(afterIds.every((id) => BigInt(id) > 2n ** 53n));

      // The int64 claim ran and was reported under exactly the digits it was pulled with.
      assert.equal(bed.ranCount('say int64'), 1);
      const reportsFor = (id: string) => api.requests.filter((r) => (r.route === 'done' || r.route === 'fail') && r.commandId === id);
      assert.deepEqual(
        reportsFor(INT64_ID).map((r) => r.route),
        ['done'],
      );
      assert.equal(api.requests.filter((r) => r.commandId === '9007199254740992').length, 0);
      // A claim with an id but no command is reported failed, never left hanging.
      assert.deepEqual(
        reportsFor('77').map((r) => r.route),
        ['fail'],
      );
      // Unusable answers (malformed, id "abc") cannot be reported: nothing ran for them.
      assert.equal(bed.ranCount('say abc'), 0);

      // Refused commands never reached the game server, and the connection was never dropped for them.
      const ran = bed.ran();
      assert.deepEqual(ran.sort(), ['say int64', ...after].sort(), `ran: ${JSON.stringify(ran.map((c) => c.slice(0, 40)))}`);
      assert.equal(bed.rcon.totalConnections, 1, 'porter reconnected to RCON: a refused command must not cost the connection');
      assert.equal(bed.rcon.framingViolations, 0);

      // Every fault was played, and porter backed off after the 5xx and the reset.
      const faults = api.requests.filter((r) => r.fault !== undefined).map((r) => r.fault);
      assert.deepEqual(faults, ['malformed', 'body (200)', 'body (200)', 'body (200)', '500', '503', 'reset']);

      // Still alive and still delivering.
      const lateId = api.enqueue(SIM_SERVER_ID, { command: 'say late' });
      await waitFor(() => api.commands().find((c) => c.id === lateId)!.status === 'EXECUTED', {
        ...WAIT,
        what: 'a delivery after everything',
      });
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
      assert.ok(porter.events('pull.failed').length >= 3, 'the 500, 503 and reset are each logged with a backoff');
      t.diagnostic(`${api.requests.length} requests; recovered from ${faults.length} faults`);
    } finally {
      await bed.close();
    }
  });

  test('a 3 MiB command, a negative id, a report refused with 400: each settled or passed over, and the next command on the server is delivered', async () => {
    const bed = await startBed();
    try {
      bed.writeConfig();
      const { api } = bed;
      const command = (id: string) => api.commands().find((c) => c.id === id)!;
      const porter = bed.spawnPorter();

      // Over porter's 1 MiB answer cap: reported failed with its size, never run.
      const hugeId = api.enqueue(SIM_SERVER_ID, { command: `say ${'x'.repeat(3 * 1024 * 1024)}` });
      const afterHuge = api.enqueue(SIM_SERVER_ID, { command: 'say after-huge' });
      await waitFor(() => command(afterHuge).status === 'EXECUTED' || porter.exit, { ...WAIT, what: 'the command after the 3 MiB one' });
      assert.equal(command(hugeId).status, 'FAILED', porter.tail());
      assert.match(
        command(hugeId).error ?? '',
        /^command of 3145732 bytes exceeds porter's limit of 1048576 bytes .*shorten the command in the store/,
      );
      assert.equal(acceptedReports(command(hugeId)), 1);

      // A negative id (the platform's ids come from a sequence): not run, nothing reported to it.
      api.inject('pull', { body: '{"id": -5, "command": "say negative"}' });
      const afterNegative = api.enqueue(SIM_SERVER_ID, { command: 'say after-negative' });
      await waitFor(() => command(afterNegative).status === 'EXECUTED' || porter.exit, {
        ...WAIT,
        what: 'the command after the negative id',
      });
      assert.equal(bed.ranCount('say negative'), 0);
      assert.equal(api.requests.filter((r) => r.commandId === '-5').length, 0);
      assert.equal(porter.events('pull.unusable').length, 1);

      // A report refused for good: given up once, recorded, and the server goes on.
      api.inject('done', {
        status: 400,
        contentType: 'application/problem+json',
        body: '{"status":400,"code":"VALIDATION_ERROR","detail":"free text porter must not keep"}',
      });
      // A claim the fake does not hold (a platform would keep it PROCESSING until its own timeout, which is not porter's to wait for).
      const refusedId = '4242';
      api.inject('pull', { body: `{"id": ${refusedId}, "command": "say refused-report"}` });
      const afterRefused = api.enqueue(SIM_SERVER_ID, { command: 'say after-refused' });
      await waitFor(() => command(afterRefused).status === 'EXECUTED' || porter.exit, {
        ...WAIT,
        what: 'the command after the refused report',
      });
      assert.equal(
        api.requests.filter((r) => r.route === 'done' && r.commandId === refusedId).length,
        1,
        'the refused report was sent again',
      );
      assert.deepEqual(
        porter.events('report.refused').map(({ status, apiCode }) => ({ status, apiCode })),
        [{ status: 400, apiCode: 'VALIDATION_ERROR' }],
      );
      assert.equal(porter.exit, undefined, porter.tail());
      porter.kill('SIGTERM');
      assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());

      const stateDir = join(bed.dir, 'state');
      const history = readdirSync(stateDir)
        .filter((name) => name.startsWith('history'))
        .map((name) => readFileSync(join(stateDir, name), 'utf8'))
        .join('');
      const refused = history.split('\n').filter((line) => line.includes(`"id":"${refusedId}"`) && line.includes('reportRefused'));
      assert.equal(refused.length, 1, history);
      assert.match(refused[0]!, /"reportRefused":"400 VALIDATION_ERROR"/);
      assert.doesNotMatch(history, /free text porter must not keep/);
      assert.doesNotMatch(history, /xxxxxxxxxx/, 'the 3 MiB command was kept');
    } finally {
      await bed.close();
    }
  });
});
