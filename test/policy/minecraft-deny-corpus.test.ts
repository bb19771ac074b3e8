import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { gameFor } from '../../src/games/registry.js';
import { compileCommandPolicy } from '../../src/policy/command-policy.js';

/**
 * The Minecraft default deny list against a corpus of spellings (docs/design.md#command-safety). Every line in
 * MUST_REFUSE is a way a deny-listed command reaches the game (or, marked, a line read on the
 * refusing side on purpose); every line in MUST_PASS is an ordinary store delivery.
 */
const policy = compileCommandPolicy(gameFor({ preset: 'minecraft' }));

const MUST_REFUSE: readonly string[] = [
  // The four reported bypasses.
  'execute unless entity run run op Mallory',
  'execute store result storage run x int 1 run op Mallory',
  'return run op Mallory',
  'execute as @a run execute at @s run stop',
  // A selector, objective, storage or path literally named run.
  'execute as run run op Mallory',
  'execute if entity run run run stop',
  'execute store success score run run run whitelist off',
  'execute if score run run matches 1.. run deop Owner',
  'execute store result storage run run int 1 run op Mallory',
  'execute as @a[name=run] run op Mallory',
  'execute as @a at @s run op x',
  'execute if entity @s run kill @e',
  'execute as @a run transfer evil.example 25565',
  'execute as @a run reload confirm',
  'execute run save-off',
  'execute run ban-ip 203.0.113.7',
  // return run (1.20.3+), alone and mixed with execute.
  'return run execute run deop x',
  'minecraft:return run minecraft:op x',
  'execute run return run op x',
  'return run return run stop',
  'execute if entity run run return run execute unless entity run run op Mallory',
  // Spellings of the chain and of the command it runs.
  '/execute as @a run op x',
  '//execute as @a run op x',
  'minecraft:execute as @a run op x',
  '/minecraft:execute as @a run /minecraft:op x',
  'EXECUTE AS @A RUN OP X',
  'Execute As @a Run Op x',
  'execute as @a run bukkit:op x',
  'execute as @a run essentials:op x',
  'execute as @a run /op x',
  'execute\tas\t@a\trun\top\tx',
  'execute   as  @a   run    op   x',
  '   execute as @a run op x   ',
  'execute as @a run WHITELIST   OFF',
  'execute as @a run\u00a0op x',
  // Deep nesting.
  `${'execute as @a run '.repeat(40)}stop`,
  `${'execute if entity run run '.repeat(25)}op Mallory`,
  `${'return run '.repeat(30)}deop Owner`,
  // Java 1.12 and older: execute <entity> <x> <y> <z> [detect …] <command>, no run keyword.
  'execute @a ~ ~ ~ op Mallory',
  'execute Mallory ~1 ~-2 ~0.5 stop',
  'execute @p 0 64 0 detect ~ ~-1 ~ stone 0 op Mallory',
  'execute @a ~ ~ ~ execute @s ~ ~ ~ deop Owner',
  'execute @a ^ ^ ^ /minecraft:op Mallory',
  // Essentials sudo runs the rest of the line as the named player, who may be an operator.
  'sudo Owner op Mallory',
  'esudo Owner stop',
  'essentials:sudo * op Mallory',
  'sudo Owner c:/op Mallory',
  'sudo Owner /op Mallory',
  'sudo Owner execute run op Mallory',
  'execute run sudo Owner whitelist off',
  // Command blocks run the text of their Command tag.
  'setblock ~ ~ ~ command_block{Command:"op Mallory",auto:1b}',
  'setblock ~ ~ ~ minecraft:repeating_command_block{"Command" : "stop",auto:1b}',
  "fill 0 0 0 1 1 1 command_block{Command:'op Mallory',auto:1b}",
  'summon command_block_minecart ~ ~ ~ {Command:"op Mallory"}',
  'data merge block 0 64 0 {Command:"op Mallory",auto:1b}',
  'data modify block 0 64 0 Command set value "op Mallory"',
  'execute run data modify entity @e[type=command_block_minecart,limit=1] Command set value "stop"',
  'give Mallory command_block[block_entity_data={id:"command_block",Command:"op Mallory"}]',
  // On the refusing side on purpose: inside a chain, text after a "run" is read as a command.
  'execute as @a run tellraw @s "please run op Mallory"',
];

const MUST_PASS: readonly string[] = [
  'give Steve diamond 64',
  'minecraft:give Steve diamond 64',
  'lp user Steve parent add vip',
  'lp user Steve permission set essentials.fly true',
  'eco give Steve 1000',
  'kit vip Steve',
  'sudo Steve kit vip',
  'whitelist add Steve',
  'execute as Steve run give @s diamond 1',
  'execute as Steve at @s run summon minecraft:firework_rocket ~ ~1 ~',
  'execute positioned 1 64 1 run give Steve diamond 1',
  'execute if entity Steve run give Steve diamond 1',
  'execute Steve ~ ~ ~ give Steve diamond 1',
  'return 1',
  'return run give Steve diamond 1',
  // A player named run, op, stop or Command is just an argument.
  'give run diamond 1',
  'execute as run run give @s diamond 1',
  'give op diamond 1',
  'execute as stop run give @s diamond 1',
  'give Command diamond 1',
  // Outside a chain a message is one argument: its words never start a command.
  'tellraw @a "run op"',
  'tellraw @a {"text":"Steve bought VIP! run /op? no: run /shop"}',
  'say run op Mallory',
  'execute as Steve run tellraw @s "Thanks, run to spawn!"',
  'tellraw Steve {"text":"Commander rank unlocked"}',
];

describe('Minecraft default deny list: corpus of spellings', () => {
  test('every spelling of a denied command, direct or run by another command, is refused', () => {
    const passed = MUST_REFUSE.filter((command) => policy.check(command).ok);
    assert.deepEqual(passed, [], 'these reached the game');
  });

  test('ordinary store deliveries pass', () => {
    const refused = MUST_PASS.map((command) => ({ command, verdict: policy.check(command) })).filter(({ verdict }) => !verdict.ok);
    assert.deepEqual(refused, [], 'these deliveries were refused');
  });

  test('the refusal names the rule that matched', () => {
    assert.deepEqual(policy.check('execute unless entity run run op Mallory'), {
      ok: false,
      reason: 'denied by the minecraft preset\'s default deny rule "op" (set commandPolicy.defaultDeny to false to allow it)',
    });
    const verdict = policy.check('data modify block 0 64 0 Command set value "op Mallory"');
    assert.ok(!verdict.ok && /default deny rule "\/\\bCommand/.test(verdict.reason), JSON.stringify(verdict));
  });
});
