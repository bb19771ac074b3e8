import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTShockServer, type FakeTShockServer } from '../../src/sim/faults/tshock-server.js';
import { parseParameters } from '../../src/sim/consoles/terraria.js';
import { unescapeDataString } from '../../src/sim/tshock-query.js';

/**
 * The simulated TShock REST API holds to what TShockAPI/Rest and TShockAPI/Commands.cs do (see the
 * top of src/sim/tshock-server.ts). Requests go through node:http, not porter's undici client, and
 * the query is written by hand, so the fake is not tested by the code it is meant to test.
 */

const TOKEN = 'sim-token-5b1f0c';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A GET with a query written as given (already encoded): no client library decides the encoding. */
function get(server: FakeTShockServer, pathAndQuery: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: server.host, port: server.port, path: pathAndQuery, method: 'GET', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const json = (answer: Answer) => JSON.parse(answer.body) as Record<string, unknown>;
const rawcmd = (cmd: string, token = TOKEN) => `/v3/server/rawcmd?cmd=${encodeURIComponent(cmd)}&token=${encodeURIComponent(token)}`;

describe('fake TShock REST API', () => {
  let server: FakeTShockServer;
  before(async () => {
    server = await startTShockServer({ token: TOKEN, players: ['Bob the Builder', { nickname: 'Ann, 1st', username: 'ann' }] });
  });
  after(() => server.close());

  test('a missing token is 401, a wrong one 403, in the JSON status and the HTTP status alike', async () => {
    const missing = await get(server, '/v3/server/rawcmd?cmd=%2Fwho');
    assert.equal(missing.status, 401);
    assert.deepEqual(json(missing), { status: '401', error: 'Not authorized. The specified API endpoint requires a token.' });
    const wrong = await get(server, rawcmd('/who', 'nope'));
    assert.equal(wrong.status, 403);
    assert.deepEqual(json(wrong), {
      status: '403',
      error: 'Not authorized. The specified API endpoint requires a token, but the provided token was not valid.',
    });
    assert.equal(server.executed.length, 0, 'nothing ran');
  });

  test("answers are indented JSON, labelled as TShock's, and close the connection", async () => {
    const answer = await get(server, `/tokentest?token=${TOKEN}`);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(answer.headers.connection, 'close');
    assert.match(String(answer.headers.server), /^TShockAPI\//);
    assert.ok(answer.body.startsWith('{\n  "status": "200",'), answer.body);
    assert.equal(json(answer).response, 'Token is valid and was passed through correctly.');
  });

  test('routes match without trailing slashes and in any case; an unknown one is 404', async () => {
    assert.equal((await get(server, `/V2/Players/List/?token=${TOKEN}`)).status, 200);
    const unknown = await get(server, `/v9/nothing?token=${TOKEN}`);
    assert.equal(unknown.status, 404);
    assert.match(String(json(unknown).error), /^Specified API endpoint doesn't exist/);
  });

  test('the player list shows nickname, username, group, active, state and team; joins and leaves show at once', async () => {
    const list = async () => (json(await get(server, `/v2/players/list?token=${TOKEN}`)).players as Record<string, unknown>[]) ?? [];
    assert.deepEqual((await list())[1], { nickname: 'Ann, 1st', username: 'ann', group: 'default', active: true, state: 10, team: 0 });
    server.join({ nickname: 'Jo', active: false });
    server.join('Łucja ★');
    assert.deepEqual(
      (await list()).map((p) => [p.nickname, p.active]),
      [
        ['Bob the Builder', true],
        ['Ann, 1st', true],
        ['Jo', false],
        ['Łucja ★', true],
      ],
    );
    assert.deepEqual(server.online(), ['Bob the Builder', 'Ann, 1st', 'Łucja ★']);
    server.leave('Jo');
    server.leave('Łucja ★');
    assert.equal((await list()).length, 2);
  });

  test('rawcmd: give to a player by a name prefix, and TShock texts for what fails', async () => {
    const lines = async (cmd: string) => json(await get(server, rawcmd(cmd))).response;
    assert.deepEqual(await lines('/give "Terra Blade" "Bob" 1'), ['Gave Bob the Builder 1 Terra Blade.']);
    assert.deepEqual(await lines('/g 188 "ann," 0'), ['Gave Ann, 1st 9999 Healing Potions.']);
    assert.deepEqual(await lines('/give "Terra Blade" Ghost'), ['Invalid player!']);
    assert.deepEqual(await lines('/give Nope Bob'), ['Invalid item type!']);
    assert.deepEqual(await lines('/give Bob'), [
      'Invalid syntax. Proper syntax: /give <item type/id> <player> [item amount] [prefix id/name]',
    ]);
    assert.deepEqual(await lines('/item Zenith'), ['You must use this command in-game.']);
    assert.deepEqual(await lines('/say Thanks!'), []);
    assert.deepEqual(await lines('/frobnicate'), ['Invalid command entered. Type /help for a list of valid commands.']);
    assert.deepEqual(await lines('/ give'), ['You entered a space after / instead of a command. Type /help for a list of valid commands.']);
    // HandleCommand drops the first character whatever it is: without the slash the name loses a letter.
    assert.deepEqual(await lines('give Zenith Bob'), ['Invalid command entered. Type /help for a list of valid commands.']);
  });

  test('two players matching one name are a multiple-match error, as TShock has no exact-match preference', async () => {
    server.join('Bobby');
    try {
      const answer = json(await get(server, rawcmd('/give Zenith Bob'))).response as string[];
      assert.equal(answer[0], 'More than one match found -- unable to decide which is correct: ');
      assert.equal(answer[1], 'Bob the Builder, Bobby');
      assert.deepEqual(json(await get(server, rawcmd('/give Zenith tsn:Bobby'))).response, ['Gave Bobby 1 Zenith.']);
    } finally {
      server.leave('Bobby');
    }
  });

  test('an empty cmd is 400 "Missing or empty cmd parameter" and runs nothing', async () => {
    const before = server.executed.length;
    for (const query of [`/v3/server/rawcmd?token=${TOKEN}`, `/v3/server/rawcmd?cmd=+++&token=${TOKEN}`]) {
      const answer = await get(server, query);
      assert.equal(answer.status, 400);
      assert.deepEqual(json(answer), { status: '400', error: 'Missing or empty cmd parameter' });
    }
    assert.equal(server.executed.length, before);
  });

  test('cmd is decoded twice, as TShock does: `+` is a space, and a once-encoded %41 arrives as A', async () => {
    const before = server.executed.length;
    await get(server, `/v3/server/rawcmd?cmd=%2Fsay+50%2541+off&token=${TOKEN}`);
    await get(server, `/v3/server/rawcmd?cmd=${encodeURIComponent(encodeURIComponent('/say 50%41 + 1'))}&token=${TOKEN}`);
    assert.deepEqual(
      server.executed.slice(before).map((e) => e.command),
      ['/say 50A off', '/say 50%41 + 1'],
    );
  });

  test('the token is decoded once: a token with % and + works when encoded once', async () => {
    const odd = await startTShockServer({ token: 'p%41+ss w' });
    try {
      assert.equal((await get(odd, `/tokentest?token=${encodeURIComponent('p%41+ss w')}`)).status, 200);
      assert.equal((await get(odd, `/tokentest?token=${encodeURIComponent(encodeURIComponent('p%41+ss w'))}`)).status, 403);
    } finally {
      await odd.close();
    }
  });

  test('/who is read-only and flagged as a query in the executed log', async () => {
    const answer = json(await get(server, rawcmd('/who'))).response;
    assert.deepEqual(answer, ['Online Players ([c/AAFFAA:2]/8)', 'Bob the Builder, Ann, 1st']);
    assert.equal(server.executed.at(-1)?.query, true);
  });

  test('a group without tshock.rest.command is refused rawcmd with 403, yet reads players', async () => {
    server.setRawCommandPermission(false);
    try {
      const refused = await get(server, rawcmd('/give Zenith Bob'));
      assert.equal(refused.status, 403);
      assert.equal(json(refused).error, 'Not authorized. User "porter" has no access to use the specified API endpoint.');
      assert.equal((await get(server, `/v2/players/list?token=${TOKEN}`)).status, 200);
    } finally {
      server.setRawCommandPermission(true);
    }
  });
});

describe('fake TShock REST API faults', () => {
  let server: FakeTShockServer;
  before(async () => {
    server = await startTShockServer({ token: TOKEN, players: ['Bob'] });
  });
  after(() => server.close());

  const ran = () => server.executed.filter((e) => !e.query).map((e) => e.command);

  test('close-without-running drops the connection and runs nothing', async () => {
    const before = ran().length;
    server.failNext('close-without-running');
    await assert.rejects(get(server, rawcmd('/give Zenith Bob')));
    assert.equal(ran().length, before);
  });

  test('close-before-answer and close-mid-answer run the command, then drop the connection', async () => {
    for (const fault of ['close-before-answer', 'close-mid-answer'] as const) {
      const before = ran().length;
      server.failNext(fault);
      await assert.rejects(get(server, rawcmd('/give Zenith Bob')), fault);
      assert.equal(ran().length, before + 1, fault);
    }
  });

  test('exception answers 500 as TShock does, garbage answers 200 with no JSON, proxy-502 runs nothing', async () => {
    server.failNext('exception');
    const exception = await get(server, rawcmd('/give Zenith Bob'));
    assert.equal(exception.status, 500);
    assert.equal(json(exception).error, 'Internal server error.');
    server.failNext('garbage');
    const garbage = await get(server, rawcmd('/give Zenith Bob'));
    assert.equal(garbage.status, 200);
    assert.throws(() => json(garbage));
    const before = ran().length;
    server.failNext('proxy-502');
    const proxy = await get(server, rawcmd('/give Zenith Bob'));
    assert.equal(proxy.status, 502);
    assert.equal(ran().length, before);
  });

  test('faults skip read-only commands and the player list', async () => {
    server.failNext('close-before-answer');
    assert.equal((await get(server, rawcmd('/who'))).status, 200);
    assert.equal((await get(server, `/v2/players/list?token=${TOKEN}`)).status, 200);
    await assert.rejects(get(server, rawcmd('/give Zenith Bob')));
  });

  test('down refuses connections, up listens on the same port again, players kept', async () => {
    const port = server.port;
    await server.down();
    await assert.rejects(get(server, `/tokentest?token=${TOKEN}`), /ECONNREFUSED/);
    await server.up();
    assert.equal(server.port, port);
    assert.equal((await get(server, `/tokentest?token=${TOKEN}`)).status, 200);
    assert.deepEqual(server.online(), ['Bob']);
  });
});

describe('TShock text helpers of the fake', () => {
  test('ParseParameters: quotes group, backslash escapes quote, space and backslash only', () => {
    assert.deepEqual(parseParameters(' "Terra Blade"  Bob\\ Smith 1'), ['Terra Blade', 'Bob Smith', '1']);
    assert.deepEqual(parseParameters('a\\"b c\\d'), ['a"b', 'c\\d']);
    assert.deepEqual(parseParameters('x"y z"w'), ['x', 'y z', 'w']);
  });

  test('Uri.UnescapeDataString: valid UTF-8 escapes decoded, the rest left as written', () => {
    assert.equal(unescapeDataString('50%41%20%C5%81ucja'), '50A Łucja');
    assert.equal(unescapeDataString('100% sure %G1 %C5 %FF+'), '100% sure %G1 %C5 %FF+');
  });
});
