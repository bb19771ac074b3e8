import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { waitFor } from '../helpers/wait-for.js';
import { isSettled, RCON_PASSWORD, SIM_SERVER_ID, SIM_TOKEN, startBed, WAIT, type TestBed } from './harness.js';

/**
 * "Did Steve get his VIP?" through the real CLI: porter delivers, is stopped with SIGTERM and
 * started again, reloads (SIGHUP) a config that restarts its loop, and `porter history` (run while
 * the second porter delivers) answers from the history both wrote; /history on the loopback
 * health port answers the same records.
 * The game server echoes the RCON password and the API token in an answer: neither may appear in
 * what `porter history` prints, /history serves or the history files hold.
 */

interface HistoryLine {
  readonly id: string;
  readonly command?: string;
  readonly outcome: string;
  readonly why?: string;
  readonly answer?: string;
  readonly reason?: string;
}

async function history(bed: TestBed, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = bed.spawnPorter({ args: ['history', '-c', bed.configPath, ...args] });
  const exit = await run.waitExit();
  return { code: exit.code, stdout: run.stdout, stderr: run.stderr };
}

function jsonLines(text: string): HistoryLine[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as HistoryLine);
}

describe('porter history through the real CLI', () => {
  test('after deliveries, SIGTERM, a restart and a reload: --player Steve and --failed --json answer, /history agrees, no secret shows', async () => {
    // Ids above 2^53: the history keeps the digits the store sent.
    const bed = await startBed({ api: { idStart: 9007199254740993n } });
    try {
      bed.writeConfig((config) => Object.assign(config, { health: { listen: '127.0.0.1:0' } }));
      bed.rcon.setHandler((command) => (command.startsWith('tell ') ? `auth ${RCON_PASSWORD} token ${SIM_TOKEN} accepted` : undefined));
      const commands = {
        vip: 'lp user Steve parent add vip',
        absent: 'give Alex diamond 1',
        refused: 'op Steve',
        gift: 'give Steve diamond 1',
        leak: 'tell Steve thanks for your purchase',
        steven: 'give Steven diamond 1',
      };
      const ids = Object.fromEntries(
        Object.entries(commands).map(([name, command]) => [name, bed.api.enqueue(SIM_SERVER_ID, { command })]),
      );

      const first = bed.spawnPorter();
      await waitFor(() => bed.api.commands().every((c) => isSettled(c.status)) || first.exit, { ...WAIT, what: 'six deliveries' });
      first.kill('SIGTERM');
      assert.deepEqual(await first.waitExit(), { code: 0, signal: null }, first.tail());

      const second = bed.spawnPorter();
      const listening = await second.waitForEvent('health.listening');
      await second.waitForEvent('porter.started');
      const later = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve gold_ingot 3' });
      await waitFor(() => bed.api.commands().find((c) => c.id === later)?.status === 'EXECUTED' || second.exit, {
        ...WAIT,
        what: 'a delivery after the restart',
      });
      // A reload that renames the server restarts its loop: the new loop records in the same history.
      bed.writeConfig((config) => {
        Object.assign(config, { health: { listen: '127.0.0.1:0' } });
        config.servers[0]!.name = 'itest-renamed';
      });
      second.kill('SIGHUP');
      const applied = await second.waitForEvent('reload.done');
      assert.deepEqual(applied.servers, ['itest-renamed'], second.tail());
      const reloaded = bed.api.enqueue(SIM_SERVER_ID, { command: 'give Steve iron_ingot 2' });
      await waitFor(() => bed.api.commands().find((c) => c.id === reloaded)?.status === 'EXECUTED' || second.exit, {
        ...WAIT,
        what: 'a delivery after the reload',
      });

      const steve = await history(bed, '--player', 'Steve');
      assert.equal(steve.code, 0, steve.stderr);
      const rows = steve.stdout.split('\n').filter(Boolean);
      assert.match(rows[0]!, /^TIME \(UTC\)\s+SERVER\s+ID\s+OUTCOME\s+MS\s+COMMAND\s+ANSWER \/ REASON$/);
      // Columns are two or more spaces apart; the third is the command id.
      const cells = rows.slice(1).map((row) => row.split(/\s{2,}/));
      assert.deepEqual(
        cells.map((row) => row[2]),
        [ids.vip, ids.refused, ids.gift, ids.leak, later, reloaded],
        "Steve's deliveries, oldest first (not Alex, not Steven)",
      );
      assert.equal(cells.at(-1)![1], 'itest-renamed');
      assert.deepEqual(cells[0]!.slice(1, 4), ['itest', ids.vip, 'executed']);
      assert.deepEqual(cells[0]!.slice(5), [commands.vip, '[LP] Steve now inherits permissions from vip in context global.']);
      assert.equal(cells[1]![3], 'failed (refused)');

      const failed = await history(bed, '--failed', '--json');
      assert.equal(failed.code, 0, failed.stderr);
      const records = jsonLines(failed.stdout);
      assert.deepEqual(
        records.map((r) => [r.id, r.command, r.why]),
        [
          [ids.absent, commands.absent, 'game-answer'],
          [ids.refused, commands.refused, 'refused'],
          [ids.steven, commands.steven, 'game-answer'],
        ],
      );
      assert.match(records[0]!.reason!, /^the game answered: No player was found/);

      const response = await fetch(`http://127.0.0.1:${String(listening.port)}/history?failed`, { signal: AbortSignal.timeout(5000) });
      assert.equal(response.status, 200);
      const served = (await response.json()) as { records: HistoryLine[] };
      assert.deepEqual(served.records, records, '/history serves what porter history --json prints');

      const all = await history(bed, '--json', '--limit', '100');
      const leak = jsonLines(all.stdout).find((r) => r.id === ids.leak);
      assert.equal(leak?.answer, 'auth [Redacted] token [Redacted] accepted');
      const everything = await (await fetch(`http://127.0.0.1:${String(listening.port)}/history`)).text();
      const stateDir = join(bed.dir, 'state');
      const files = readdirSync(stateDir)
        .filter((name) => name.startsWith('history'))
        .map((name) => readFileSync(join(stateDir, name), 'utf8'))
        .join('\n');
      for (const secret of [RCON_PASSWORD, SIM_TOKEN]) {
        for (const [where, text] of Object.entries({ table: steve.stdout, json: all.stdout, '/history': everything, files })) {
          assert.ok(!text.includes(secret), `a secret reached ${where}`);
        }
      }

      second.kill('SIGTERM');
      assert.deepEqual(await second.waitExit(), { code: 0, signal: null }, second.tail());
    } finally {
      await bed.close();
    }
  });

  test('a flag value it cannot use exits 64 naming the flag; no history yet is not an error; no secret is needed', async () => {
    const bed = await startBed();
    try {
      // As under systemd: the token is a credential only the service gets, so porter history cannot read it.
      bed.writeConfig((config) => {
        delete config.api.token;
        config.api.tokenFile = './not-readable-here';
      });
      const since = await history(bed, '--since', '3 fortnights');
      assert.equal(since.code, 64);
      assert.match(since.stderr, /--since "3 fortnights": expected a time back from now such as 30s, 15m, 2h or 7d/);
      const unknown = await history(bed, '--playr', 'Steve');
      assert.equal(unknown.code, 64);
      assert.match(unknown.stderr, /unknown option '--playr'/);
      const empty = await history(bed, '--player', 'Steve');
      assert.equal(empty.code, 0, empty.stderr);
      assert.equal(empty.stdout, '');
      assert.match(empty.stderr, /no deliveries recorded yet/);
    } finally {
      await bed.close();
    }
  });
});
