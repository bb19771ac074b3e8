import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { parseSourceStatus, sourceGame } from '../../src/games/source.js';
import { findSteamId64, toSteamId64 } from '../../src/games/steam-id.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('SteamID conversions', () => {
  test('SteamID2, SteamID3 and SteamID64 give the same SteamID64', () => {
    assert.equal(toSteamId64('STEAM_0:1:12345'), '76561197960290419');
    assert.equal(toSteamId64('STEAM_1:1:12345'), '76561197960290419');
    assert.equal(toSteamId64('[U:1:24691]'), '76561197960290419');
    assert.equal(toSteamId64('76561197960290419'), '76561197960290419');
  });

  test('bots and unauthenticated clients have none', () => {
    for (const id of ['BOT', 'STEAM_ID_PENDING', 'STEAM_ID_LAN', 'VALVE_ID_LAN', '', '123']) assert.equal(toSteamId64(id), null);
  });

  test('findSteamId64 finds an id inside other text', () => {
    assert.equal(findSteamId64(' [U:1:24691] 1.2.3.4:27005 '), '76561197960290419');
    assert.equal(findSteamId64(' 172.18.0.1:37738 '), null);
  });
});

describe('parseSourceStatus against recorded answers', () => {
  test('CS:GO community server: one human among bots, log line after #end', () => {
    assert.deepEqual(parseSourceStatus(fixture('source-status-csgo-bots.txt')), ['76561197962487950']);
  });

  test('CS:GO official server: every human as SteamID64, names with spaces and #', () => {
    assert.deepEqual(parseSourceStatus(fixture('source-status-csgo-official.txt')), [
      '76561198124621741',
      '76561198352285346',
      '76561198023491514',
      '76561198042114746',
      '76561198165348657',
      '76561198046487019',
      '76561198220526912',
      '76561198811400635',
      '76561198212727603',
    ]);
  });

  test('Unicode names and a name that is a single backslash, no table header', () => {
    assert.deepEqual(parseSourceStatus(fixture('source-status-csgo-odd-names.txt')), [
      '76561198900601510',
      '76561198069039791',
      '76561198165348657',
      '76561199091112475',
      '76561197981575215',
      '76561198997460403',
      '76561198347602854',
      '76561199016575891',
      '76561198799176757',
    ]);
  });

  test('CS2: the human by name; the bot and the empty [NoChan] slot are skipped', () => {
    assert.deepEqual(parseSourceStatus(fixture('source-status-cs2.txt')), ['dheagman']);
  });

  test('Source 2 (Deadlock) block with log and game lines mixed in', () => {
    assert.deepEqual(parseSourceStatus(fixture('source-status-source2-deadlock.txt')), ['Some Player']);
  });

  test('CS2 rows keep an apostrophe inside the name and prefer a SteamID when a plugin prints one', () => {
    const answer = [
      '---------players--------',
      '  id     time ping loss      state   rate adr name',
      "   2    02:05    0    0     active 786432 172.18.0.1:37738 'O'Brien'",
      "   3    00:10   20    0     active 786432 [U:1:24691] 1.2.3.4:27005 'whatever'",
      '#end',
    ].join('\n');
    assert.deepEqual(parseSourceStatus(answer), ["O'Brien", '76561197960290419']);
  });

  test('a SteamID inside a display name cannot spoof the real uniqueid', () => {
    const answer =
      '# userid name uniqueid connected ping loss state adr\n#  2 "STEAM_0:1:99999 lol" STEAM_0:1:12345 05:30 60 0 active 1.2.3.4:27005';
    assert.deepEqual(parseSourceStatus(answer), ['76561197960290419']);
    const quoted =
      '# userid name uniqueid connected ping loss state adr\n#  2 "x" STEAM_0:0:1 00:00 0 0 active" STEAM_0:1:12345 05:30 60 0 active 1.2.3.4:27005';
    assert.deepEqual(parseSourceStatus(quoted), ['76561197960290419']);
  });

  test('pending and LAN clients are skipped; TF2 [U:1:W] ids are converted', () => {
    const answer = [
      'hostname: Rallypoint TF2',
      '# userid name uniqueid connected ping loss state adr',
      '# 2 "Alice" [U:1:1234567] 05:11 62 0 active 10.0.0.9:27005',
      '# 3 "Bob" STEAM_ID_PENDING 00:01 84 1 spawning 10.0.0.11:27005',
      '# 4 "Carol" STEAM_ID_LAN 00:01 84 1 active 10.0.0.12:27005',
    ].join('\n');
    assert.deepEqual(parseSourceStatus(answer), ['76561197961500295']);
  });

  test('an answer that is not a status table is rejected', () => {
    assert.equal(parseSourceStatus('Unknown command "status"'), null);
    assert.equal(parseSourceStatus(''), null);
  });
});

describe('source preset', () => {
  test('sends status and returns SteamID64s', async () => {
    const { query, asked } = scriptedQuery({ status: fixture('source-status-csgo-bots.txt') });
    assert.deepEqual(await sourceGame.readPlayers(query), ['76561197962487950']);
    assert.deepEqual(asked, ['status']);
    assert.equal(sourceGame.splitsOnSemicolon, true);
    assert.match(sourceGame.identifier, /SteamID64/);
  });

  test('an unknown answer is a PlayerListError', async () => {
    const { query } = scriptedQuery({ status: 'Unknown command "status"' });
    await assert.rejects(sourceGame.readPlayers(query), PlayerListError);
  });
});
