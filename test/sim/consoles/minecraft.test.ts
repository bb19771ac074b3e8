import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runMinecraftCommand } from '../../../src/sim/consoles/minecraft.js';
import type { RconWorld } from '../../../src/sim/rcon-world.js';
import { offlineUuid, SimPlayers } from '../../../src/sim/rcon-players.js';

const world = (online: string[] = ['Steve', 'Alex']): RconWorld => ({
  players: new SimPlayers(online),
  maxPlayers: 20,
  balances: new Map(),
});
const run = (line: string, w: RconWorld = world()) => runMinecraftCommand(line, w).text;

describe('fake Minecraft game semantics', () => {
  test('list and list uuids', () => {
    assert.equal(run('list'), 'There are 2 of a max of 20 players online: Steve, Alex');
    assert.equal(run('list', world([])), 'There are 0 of a max of 20 players online: ');
    assert.equal(
      run('list uuids', world(['Notch'])),
      'There are 1 of a max of 20 players online: Notch (b50ad385-829d-3141-a216-7e7d7539ba7f)',
    );
    assert.equal(offlineUuid('Notch'), 'b50ad385-829d-3141-a216-7e7d7539ba7f');
  });

  test('give: online player (any case), count, selectors, offline player, namespaces and a leading slash', () => {
    assert.equal(run('give Steve diamond_sword'), 'Gave 1 [Diamond Sword] to Steve');
    assert.equal(run('give steve minecraft:diamond 64'), 'Gave 64 [Diamond] to Steve');
    assert.equal(run('give @a cake'), 'Gave 1 [Cake] to 2 players');
    assert.equal(run('/minecraft:give Alex golden_apple{display:{}} 2'), 'Gave 2 [Golden Apple] to Alex');
    assert.equal(run('give Herobrine diamond'), 'No player was found');
    assert.equal(run('give Ste diamond'), 'No player was found', 'never a substring match');
    assert.equal(run('give @a cake', world([])), 'No player was found');
  });

  test("unknown and incomplete commands carry vanilla's error context", () => {
    assert.equal(run('foo bar'), 'Unknown or incomplete command, see below for errorfoo bar<--[HERE]');
    assert.equal(run('give Steve'), 'Unknown or incomplete command, see below for errorgive Steve<--[HERE]');
    assert.equal(run('give Alexander'), 'Unknown or incomplete command, see below for error... Alexander<--[HERE]');
    assert.equal(run('GIVE Steve diamond'), 'Unknown or incomplete command, see below for errorGIVE Steve diamond<--[HERE]');
  });

  test('say is silent; effect, xp, tellraw need the player online', () => {
    assert.equal(run('say hello'), '');
    assert.equal(run('tellraw Steve {"text":"hi"}'), '');
    assert.equal(run('tellraw Nobody {"text":"hi"}'), 'No player was found');
    assert.equal(run('effect give Alex minecraft:speed 60 1'), 'Applied effect Speed to Alex');
    assert.equal(run('xp add Steve 5 levels'), 'Gave 5 experience levels to Steve');
    assert.equal(run('experience add Steve 30'), 'Gave 30 experience points to Steve');
    assert.equal(run('xp add Nobody 5 levels'), 'No player was found');
  });

  test('execute … run runs the inner command; kick takes the player offline', () => {
    const w = world();
    assert.equal(run('execute as @a run give Alex stick', w), 'Gave 1 [Stick] to Alex');
    assert.equal(run('kick Alex spamming', w), 'Kicked Alex: spamming');
    assert.equal(run('list', w), 'There are 1 of a max of 20 players online: Steve');
  });

  test('plugin roots answer plausibly; eco keeps balances', () => {
    const w = world();
    assert.equal(run('lp user Steve parent add vip', w), '[LP] Steve now inherits permissions from vip in context global.');
    assert.equal(run('eco give Steve 100', w), "$100.00 has been added to Steve's account. New balance: $100.00.");
    assert.equal(run('essentials:eco give Steve 50.5', w), "$50.50 has been added to Steve's account. New balance: $150.50.");
    assert.equal(run('crate key give Steve vote 3', w), 'You have given Steve 3 vote key(s).');
  });
});
