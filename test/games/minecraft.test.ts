import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PlayerListError } from '../../src/games/errors.js';
import { normalizeIdentifiers } from '../../src/players/normalize.js';
import { createMinecraftGame, parseMinecraftList } from '../../src/games/minecraft.js';
import { fixture, scriptedQuery } from '../players/fixtures.js';

describe('parseMinecraftList against recorded answers', () => {
  test('list uuids: account names, never the uuids', () => {
    assert.deepEqual(parseMinecraftList(fixture('minecraft-list-uuids.txt')), ['Notch', 'jeb_']);
  });

  test('list (1.17+ "of a max of"), names with "_"', () => {
    assert.deepEqual(parseMinecraftList(fixture('minecraft-list.txt')), ['Steve', 'Alex_99', 'Dinnerbone']);
  });

  test('list (1.13-1.16 "of a max" without the second "of")', () => {
    assert.deepEqual(parseMinecraftList(fixture('minecraft-list-no-second-of.txt')), ['Steve', 'Alex_99', 'jeb_']);
  });

  test('list (1.12 "N/M players online:" with the names on the next line)', () => {
    assert.deepEqual(parseMinecraftList(fixture('minecraft-list-legacy.txt')), ['Steve', 'Alex_99']);
  });

  test('zero players', () => {
    assert.deepEqual(parseMinecraftList(fixture('minecraft-list-empty.txt')), []);
    assert.deepEqual(parseMinecraftList('There are 0 of a max of 20 players online:'), []);
    assert.deepEqual(parseMinecraftList('There are 0/20 players online:\n'), []);
  });

  test('§ colour codes are removed, names stay exact', () => {
    assert.deepEqual(parseMinecraftList(fixture('minecraft-list-colours.txt')), ['Steve', 'Alex_99']);
    assert.deepEqual(parseMinecraftList('§6There are §c1§6 of a max of §c20§6 players online: §x§f§f§0§0§0§0Red_1§r'), ['Red_1']);
  });

  test('error answers are not player lists', () => {
    assert.equal(parseMinecraftList(fixture('minecraft-unknown-command.txt')), null);
    assert.equal(parseMinecraftList(fixture('minecraft-incorrect-argument.txt')), null);
    assert.equal(parseMinecraftList(''), null);
    assert.equal(parseMinecraftList('There are 2 out of maximum 20 players online.'), null);
  });

  test('exact names, never substrings: Steve online does not make Ste online', () => {
    const names = parseMinecraftList('There are 1 of a max of 20 players online: Steve');
    assert.deepEqual(names, ['Steve']);
    const { ids } = normalizeIdentifiers(names ?? []);
    assert.deepEqual(ids, ['steve']);
    assert.ok(!ids.includes('ste'));
    assert.ok(!ids.includes('steve2'));
  });
});

describe('minecraft preset: which list command', () => {
  test('prefers list uuids and keeps using it', async () => {
    const preset = createMinecraftGame();
    const { query, asked } = scriptedQuery({ 'list uuids': fixture('minecraft-list-uuids.txt') });
    assert.deepEqual(await preset.readPlayers(query), ['Notch', 'jeb_']);
    assert.deepEqual(await preset.readPlayers(query), ['Notch', 'jeb_']);
    assert.deepEqual(asked, ['list uuids', 'list uuids']);
  });

  test('falls back to list on an unknown-command answer and remembers it', async () => {
    const preset = createMinecraftGame();
    const { query, asked } = scriptedQuery({
      'list uuids': fixture('minecraft-incorrect-argument.txt'),
      'minecraft:list uuids': fixture('minecraft-unknown-command.txt'),
      list: fixture('minecraft-list.txt'),
    });
    assert.deepEqual(await preset.readPlayers(query), ['Steve', 'Alex_99', 'Dinnerbone']);
    assert.deepEqual(await preset.readPlayers(query), ['Steve', 'Alex_99', 'Dinnerbone']);
    assert.deepEqual(asked, ['list uuids', 'minecraft:list uuids', 'list', 'list']);
  });

  test('a plugin that took over list (Essentials format) sends it to minecraft:list uuids', async () => {
    const preset = createMinecraftGame();
    const { query, asked } = scriptedQuery({
      'list uuids': '§6There are §c2§6 out of maximum §c20§6 players online.\n§6default§r: Steve, Alex_99',
      'minecraft:list uuids': fixture('minecraft-list-uuids.txt'),
    });
    assert.deepEqual(await preset.readPlayers(query), ['Notch', 'jeb_']);
    assert.deepEqual(await preset.readPlayers(query), ['Notch', 'jeb_']);
    assert.deepEqual(asked, ['list uuids', 'minecraft:list uuids', 'minecraft:list uuids']);
  });

  test('no command gives a player list: a PlayerListError that says what to do', async () => {
    const preset = createMinecraftGame();
    const { query } = scriptedQuery({
      'list uuids': 'nope',
      'minecraft:list uuids': 'nope',
      list: fixture('minecraft-unknown-command.txt'),
    });
    await assert.rejects(preset.readPlayers(query), (error: unknown) => {
      assert.ok(error instanceof PlayerListError);
      assert.equal(error.code, 'E_PLAYER_LIST');
      assert.match(error.message, /minecraft preset/);
      assert.match(error.message, /"list"/);
      assert.match(error.message, /players\.preset/);
      return true;
    });
  });

  test('a remembered command that stops working probes again next time', async () => {
    const preset = createMinecraftGame();
    const answers: Record<string, string> = { 'list uuids': fixture('minecraft-list-uuids.txt') };
    const asked: string[] = [];
    const query = async (command: string) => {
      asked.push(command);
      return answers[command] ?? fixture('minecraft-unknown-command.txt');
    };
    await preset.readPlayers(query);
    answers['list uuids'] = fixture('minecraft-unknown-command.txt');
    await assert.rejects(preset.readPlayers(query), PlayerListError);
    answers.list = fixture('minecraft-list.txt');
    assert.deepEqual(await preset.readPlayers(query), ['Steve', 'Alex_99', 'Dinnerbone']);
    assert.deepEqual(asked, ['list uuids', 'list uuids', 'list uuids', 'minecraft:list uuids', 'list']);
  });

  test('each preset instance probes on its own (one per server)', async () => {
    const first = createMinecraftGame();
    const second = createMinecraftGame();
    const a = scriptedQuery({
      'list uuids': fixture('minecraft-unknown-command.txt'),
      'minecraft:list uuids': fixture('minecraft-unknown-command.txt'),
      list: fixture('minecraft-list.txt'),
    });
    const b = scriptedQuery({ 'list uuids': fixture('minecraft-list-uuids.txt') });
    await first.readPlayers(a.query);
    await second.readPlayers(b.query);
    assert.deepEqual(b.asked, ['list uuids']);
  });
});
