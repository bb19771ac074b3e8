import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startTShockServer, type FakeTShockServer } from '../../src/sim/tshock-server.js';

/**
 * Keeps the fake TShock REST API honest (docs/design.md#simulators): curl, an independent HTTP
 * client with its own URL encoding, talks to it the way TShock's own REST docs do
 * (`curl "http://host:7878/v3/server/rawcmd?cmd=...&token=..."`). Spawned with an argv array,
 * never a shell.
 */
const CURL = 'curl';
const TOKEN = 'interop-token-94ac';

function curl(args: string[]): Promise<{ error: Error | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(CURL, args, { timeout: 20_000 }, (error, stdout, stderr) => resolve({ error, stdout, stderr }));
  });
}

/** GET with the parameters URL-encoded by curl; the HTTP status is printed after the body. */
async function call(server: FakeTShockServer, route: string, params: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const args = ['-sS', '--get', '-w', '\n%{http_code}'];
  for (const [name, value] of Object.entries(params)) args.push('--data-urlencode', `${name}=${value}`);
  const { error, stdout, stderr } = await curl([...args, `${server.url}${route}`]);
  assert.equal(error, null, `curl failed: ${stderr}`);
  const newline = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(newline + 1)), body: JSON.parse(stdout.slice(0, newline)) };
}

const installed = (await curl(['--version'])).error === null;
const skip = !installed && process.env.CI !== 'true' ? 'curl is not installed (apt-get install -y curl); required when CI=true' : false;

describe('curl against the fake TShock REST API', { skip }, () => {
  let server: FakeTShockServer;
  before(async () => {
    assert.ok(installed, 'curl must be installed when CI=true: apt-get install -y curl');
    server = await startTShockServer({ token: TOKEN, players: ['Łucja ★', { nickname: 'Bob, the 2nd', username: 'bob2' }] });
  });
  after(() => server?.close());

  test('the token is proven and a give runs once, with its answer in "response"', async () => {
    assert.deepEqual(await call(server, '/tokentest', { token: TOKEN }), {
      status: 200,
      body: { status: '200', response: 'Token is valid and was passed through correctly.', associateduser: 'porter' },
    });
    const give = await call(server, '/v3/server/rawcmd', { cmd: '/give "Life Crystal" "Łucja" 5', token: TOKEN });
    assert.deepEqual(give, { status: 200, body: { status: '200', response: ['Gave Łucja ★ 5 Life Crystals.'] } });
    assert.deepEqual(
      server.executed.map((e) => e.command),
      ['/give "Life Crystal" "Łucja" 5'],
    );
  });

  test('a wrong token is HTTP 403 with the JSON error, and nothing runs', async () => {
    const before = server.executed.length;
    const answer = await call(server, '/v3/server/rawcmd', { cmd: '/give Zenith Bob', token: 'not-it' });
    assert.equal(answer.status, 403);
    assert.match(String((answer.body as { error?: unknown }).error), /provided token was not valid/);
    assert.equal(server.executed.length, before);
  });

  test('the player list reads as JSON with the fields TShock sends', async () => {
    const answer = await call(server, '/v2/players/list', { token: TOKEN });
    assert.equal(answer.status, 200);
    assert.deepEqual((answer.body as { players: unknown[] }).players[1], {
      nickname: 'Bob, the 2nd',
      username: 'bob2',
      group: 'default',
      active: true,
      state: 10,
      team: 0,
    });
  });
});
