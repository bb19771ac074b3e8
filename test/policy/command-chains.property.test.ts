import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { gameFor } from '../../src/games/registry.js';
import { compileCommandPolicy } from '../../src/policy/command-policy.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * Property tests of the command policy's chain reading (docs/design.md#command-safety): whatever a buyer's
 * nickname and however an execute/return chain is built, a denied command it runs is refused;
 * a chain that runs only allowed commands is never refused by an allow list naming them.
 * Replay a failure with PORTER_FC_SEED=<seed printed by fast-check>; PORTER_FC_RUNS=<n> hunts longer.
 */
const RUNS = { numRuns: 400 };

const minecraft = gameFor({ preset: 'minecraft' });
const defaults = compileCommandPolicy(minecraft);

/** A command name as the game (or a plugin) still accepts it: slashes, a namespace, any case. */
function spelled(name: string): fc.Arbitrary<string> {
  return fc
    .record({
      slash: fc.constantFrom('', '/', '//'),
      namespace: fc.constantFrom('', 'minecraft:', 'bukkit:', 'essentials:'),
      casing: fc.constantFrom<(text: string) => string>(
        (text) => text,
        (text) => text.toUpperCase(),
        (text) => text.replace(/^./, (first) => first.toUpperCase()),
      ),
    })
    .map(({ slash, namespace, casing }) => casing(`${slash}${namespace}${name}`));
}

const separator = fc.constantFrom(' ', '  ', '\t', ' \t ');
const join = (parts: readonly string[], gaps: readonly string[]) =>
  parts.map((part, i) => (i === 0 ? part : `${gaps[i % gaps.length]}${part}`)).join('');

/** Tokens joined by random whitespace. */
function line(parts: fc.Arbitrary<readonly string[]>): fc.Arbitrary<string> {
  return fc.tuple(parts, fc.array(separator, { minLength: 1, maxLength: 4 })).map(([tokens, gaps]) => join(tokens, gaps));
}

/** A deny-listed command with arguments, its name spelled any way. */
const deniedCommand: fc.Arbitrary<string[]> = fc
  .constantFrom(
    ['op', 'Mallory'],
    ['deop', 'Owner'],
    ['stop'],
    ['restart'],
    ['reload', 'confirm'],
    ['rl'],
    ['whitelist', 'off'],
    ['ban-ip', '203.0.113.7'],
    ['save-off'],
    ['kill', '@e'],
    ['transfer', 'evil.example', '25565'],
  )
  .chain(([name, ...args]) => spelled(name).map((root) => [root, ...args]));

/** Selectors, names and arguments, the word run and command names among them. */
const ARGUMENTS = [
  'run',
  'RUN',
  '@a',
  '@s',
  '@e[type=zombie]',
  '@a[name=run]',
  'Steve',
  'op',
  'stop',
  'execute',
  'return',
  'x',
  'minecraft:stone',
  'sales',
  'a.b',
];
const COORDINATES = ['~', '~1', '~-2', '0', '64', '-3.5', '^', '^1'];

function subcommand(argument: fc.Arbitrary<string>): fc.Arbitrary<string[]> {
  const coordinate = fc.constantFrom(...COORDINATES);
  const condition = fc.constantFrom('if', 'unless');
  return fc.oneof(
    fc.tuple(fc.constantFrom('as', 'at'), argument),
    fc.tuple(fc.constant('positioned'), coordinate, coordinate, coordinate),
    fc.tuple(fc.constant('positioned'), fc.constant('as'), argument),
    fc.tuple(fc.constant('rotated'), coordinate, coordinate),
    fc.tuple(fc.constant('facing'), fc.constant('entity'), argument, fc.constantFrom('eyes', 'feet')),
    fc.tuple(fc.constant('align'), fc.constantFrom('xyz', 'y')),
    fc.tuple(fc.constant('anchored'), fc.constantFrom('eyes', 'feet')),
    fc.tuple(fc.constant('in'), fc.constantFrom('minecraft:overworld', 'the_nether')),
    fc.tuple(fc.constant('on'), fc.constantFrom('passengers', 'vehicle')),
    fc.tuple(condition, fc.constant('entity'), argument),
    fc.tuple(condition, fc.constant('block'), coordinate, coordinate, coordinate, argument),
    fc.tuple(condition, fc.constant('score'), argument, argument, fc.constant('matches'), fc.constantFrom('1..', '0')),
    fc.tuple(condition, fc.constant('data'), fc.constant('storage'), argument, argument),
    fc.tuple(
      fc.constant('store'),
      fc.constantFrom('result', 'success'),
      fc.constant('storage'),
      argument,
      argument,
      fc.constant('int'),
      fc.constant('1'),
    ),
    fc.tuple(fc.constant('store'), fc.constantFrom('result', 'success'), fc.constant('score'), argument, argument),
    fc.tuple(fc.constant('summon'), fc.constantFrom('zombie', 'minecraft:pig')),
  );
}

/**
 * `execute <sub-commands> run <inner>` or `return run <inner>`, where inner is `end` or,
 * `depth` times over, another chain.
 */
function chain(end: fc.Arbitrary<string[]>, argument: fc.Arbitrary<string>, depth: number): fc.Arbitrary<string[]> {
  const inner = depth <= 0 ? end : fc.oneof(end, chain(end, argument, depth - 1));
  const execute = fc
    .tuple(spelled('execute'), fc.array(subcommand(argument), { maxLength: 5 }), fc.constantFrom('run', 'RUN'), inner)
    .map(([head, subs, run, rest]) => [head, ...subs.flat(), run, ...rest]);
  const returnRun = fc.tuple(spelled('return'), inner).map(([head, rest]) => [head, 'run', ...rest]);
  return fc.oneof(execute, returnRun);
}

/** Java 1.12 chains: execute <entity> <x> <y> <z> [detect <x> <y> <z> <block> <data>] <command>. */
const oldExecute = (end: fc.Arbitrary<string[]>) => {
  const coordinate = fc.constantFrom(...COORDINATES);
  const detect = fc.option(
    fc.tuple(
      fc.constant('detect'),
      coordinate,
      coordinate,
      coordinate,
      fc.constantFrom('stone', 'minecraft:air'),
      fc.constantFrom('0', '-1'),
    ),
  );
  return fc
    .tuple(spelled('execute'), fc.constantFrom(...ARGUMENTS), coordinate, coordinate, coordinate, detect, end)
    .map(([head, entity, x, y, z, condition, rest]) => [head, entity, x, y, z, ...(condition ?? []), ...rest]);
};

/** Printable text a buyer may pick as a nickname: words that matter to the policy mixed with anything. */
const nicknameText = fc
  .array(
    fc.oneof(
      fc.constantFrom('run', 'op', '/', ':', 'minecraft:', ' ', '  ', '\t', '"', "'", '@a', '~', 'stop', 'execute', 'return', 'sudo'),
      fc.string({ unit: 'grapheme', maxLength: 6 }),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(''));

const refused = (command: string) => !defaults.check(command).ok;

describe('command policy: properties of chain reading', () => {
  test('any execute/return chain, nested or 1.12-style, that ends in a denied command is refused', () => {
    const ending = fc.oneof(deniedCommand, oldExecute(deniedCommand));
    fc.assert(
      fc.property(
        line(fc.oneof(chain(ending, fc.constantFrom(...ARGUMENTS), 3), oldExecute(chain(deniedCommand, fc.constantFrom(...ARGUMENTS), 1)))),
        refused,
      ),
      fcOptions(RUNS),
    );
  });

  test('any nickname that puts "run <denied command>" into an execute or return template is refused', () => {
    const templates = [
      'execute as {player} run give @s diamond 1',
      'execute as {player} at @s run summon minecraft:firework_rocket ~ ~1 ~',
      'execute if entity {player} run give {player} diamond 1',
      'execute store result score {player} sales run give {player} diamond 1',
      'execute as @a[name={player}] run give @s diamond 1',
      'return run give {player} diamond 1',
      'minecraft:execute as {player} run lp user {player} parent add vip',
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...templates),
        nicknameText,
        separator,
        line(deniedCommand),
        nicknameText,
        (template, before, gap, denied, after) => {
          const nickname = `${before}${gap}run${gap}${denied}${/^\s/.test(after) ? after : ` ${after}`}`;
          return refused(template.replaceAll('{player}', nickname));
        },
      ),
      fcOptions(RUNS),
    );
  });

  test('any nickname that puts a denied command after "sudo <player>" is refused', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9_*]{1,16}$/);
    fc.assert(
      fc.property(name, separator, line(deniedCommand), fc.constantFrom('', 'c:/', '/'), (player, gap, denied, prefix) =>
        refused(`sudo ${player}${gap}${prefix}${denied} kit vip`),
      ),
      fcOptions(RUNS),
    );
  });

  test('a valid Minecraft name, even run, op, stop or Command, never gets an ordinary delivery refused', () => {
    const templates = [
      'give {player} diamond 64',
      'lp user {player} parent add vip',
      'eco give {player} 1000',
      'kit vip {player}',
      'sudo {player} kit vip',
      'tellraw {player} {"text":"Thanks for buying!"}',
      'execute as {player} run give @s diamond 1',
      'execute as {player} at @s run summon minecraft:firework_rocket ~ ~1 ~',
      'execute {player} ~ ~ ~ give {player} diamond 1',
      'return run give {player} diamond 1',
    ];
    const name = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9_]{1,16}$/),
      fc.constantFrom('run', 'RUN', 'op', 'stop', 'deop', 'execute', 'return', 'sudo', 'Command', 'detect', 'kill', 'c'),
    );
    fc.assert(
      fc.property(fc.constantFrom(...templates), name, (template, player) => defaults.check(template.replaceAll('{player}', player)).ok),
      fcOptions(RUNS),
    );
  });

  test('a chain whose every possible command is allowed is never refused by an allow list naming them', () => {
    const allowList = compileCommandPolicy(minecraft, {
      allow: ['execute', 'return', 'summon', 'give', 'tellraw', 'lp user', 'say'],
      defaultDeny: true,
    });
    // No argument is the word run here: a selector named run would make the next word a possible command too.
    const argument = fc.constantFrom(...ARGUMENTS.filter((word) => word.toLowerCase() !== 'run'));
    const allowedCommand = fc
      .constantFrom(
        ['give', '@s', 'diamond', '1'],
        ['tellraw', '@s', '"Thanks!"'],
        ['lp', 'user', 'Steve', 'parent', 'add', 'vip'],
        ['summon', 'minecraft:firework_rocket', '~', '~1', '~'],
        ['say', 'thanks'],
      )
      .chain(([name, ...args]) => spelled(name).map((root) => [root, ...args]));
    fc.assert(
      fc.property(line(chain(allowedCommand, argument, 3)), (command) => {
        const verdict = allowList.check(command);
        assert.deepEqual(verdict, { ok: true }, command);
      }),
      fcOptions(RUNS),
    );
  });
});
