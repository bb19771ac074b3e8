import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/errors.js';
import type { Game } from '../../src/games/game.js';
import { gameFor } from '../../src/games/registry.js';
import { compileCommandPolicy, type CommandPolicy } from '../../src/policy/command-policy.js';
import { commandRoots } from '../../src/policy/command-roots.js';

const minecraft = gameFor({ preset: 'minecraft' });
const source = gameFor({ preset: 'source' });
const ark = gameFor({ preset: 'ark' });
const none = gameFor({ preset: 'none' });

function refused(policy: CommandPolicy, command: string): string {
  const verdict = policy.check(command);
  assert.equal(verdict.ok, false, `expected "${command}" to be refused`);
  return verdict.ok ? '' : verdict.reason;
}

function allowed(policy: CommandPolicy, command: string): void {
  const verdict = policy.check(command);
  assert.deepEqual(verdict, { ok: true }, `expected "${command}" to pass`);
}

/** What a store renders from a template with a buyer-chosen nickname. */
const render = (template: string, nickname: string) => template.replaceAll('{player}', nickname);

const names = (command: string) => commandRoots(command).map((root) => root.name);

describe('commandRoots', () => {
  test('strips slashes and namespaces, follows execute … run chains and ARK cheat prefixes', () => {
    assert.deepEqual(names('  /Minecraft:OP   Steve '), ['op']);
    assert.deepEqual(names('execute as @a at @s run execute if entity @s run bukkit:op x'), ['execute', 'execute', 'op']);
    assert.deepEqual(names('admincheat DoExit'), ['doexit']);
    assert.deepEqual(names(''), []);
  });

  test('every run in an execute or return chain starts a possible command, a selector named run included', () => {
    assert.deepEqual(names('execute as run run give @s diamond'), ['execute', 'run', 'give']);
    assert.deepEqual(names('execute store result storage run x int 1 run op Mallory'), ['execute', 'x', 'op']);
    assert.deepEqual(names('return run execute run deop x'), ['return', 'execute', 'deop']);
    assert.deepEqual(names('give run diamond 1'), ['give'], 'outside a chain, run is just an argument');
    assert.deepEqual(names('tellraw @a "run op"'), ['tellraw']);
  });

  test('1.12 execute, Essentials sudo and its c:/ chat form', () => {
    assert.deepEqual(names('execute @a ~ ~1 ~ op x'), ['execute', 'op']);
    assert.deepEqual(names('execute @p 0 64 0 detect ~ ~-1 ~ stone 0 stop'), ['execute', 'stop']);
    assert.deepEqual(names('execute positioned 1 64 1 run give Steve diamond'), ['execute', 'give'], 'modern syntax with coordinates');
    assert.deepEqual(names('sudo Owner c:/op Mallory'), ['sudo', 'op']);
    assert.deepEqual(names('essentials:esudo * execute run stop'), ['esudo', 'execute', 'stop']);
  });

  test('a root matches whole tokens from where it starts', () => {
    const op = commandRoots('execute run /minecraft:OP Mallory now')[1]!;
    assert.ok(op.startsWith(['op']) && op.startsWith(['op', 'mallory']) && op.startsWith(['op', 'mallory', 'now']));
    assert.ok(!op.startsWith(['op', 'steve']) && !op.startsWith(['op', 'mallory', 'now', 'later']) && !op.startsWith([]));
  });

  test('stays linear: a line of 100,000 run tokens, or of 30,000 nested chains, is read at once', () => {
    assert.equal(commandRoots(`execute ${'run '.repeat(100_000)}op x`).length, 100_001);
    assert.equal(commandRoots(`${'execute run '.repeat(30_000)}stop`).length, 30_001);
  });
});

describe('command policy: root-command rules', () => {
  const policy = compileCommandPolicy(minecraft, { deny: ['give'], defaultDeny: true });

  test('every spelling of a denied root is refused, with the rule named', () => {
    for (const command of [
      'op Steve',
      '/op Steve',
      '/OP Steve',
      'minecraft:op Steve',
      'bukkit:op Steve',
      'essentials:op x',
      '   op    Steve',
      '\top\tSteve',
      '//op x',
    ]) {
      assert.equal(
        refused(policy, command),
        'denied by the minecraft preset\'s default deny rule "op" (set commandPolicy.defaultDeny to false to allow it)',
        command,
      );
    }
    assert.equal(refused(policy, 'give Steve diamond'), 'denied by commandPolicy rule "give"');
  });

  test('whole tokens only: a root that merely starts the same is not caught', () => {
    allowed(policy, 'opsay hello');
    allowed(policy, 'stopwatch start');
    allowed(policy, 'say op');
    allowed(policy, 'tellraw @a "stop"');
  });

  test('multi-word roots match however the words are spaced, and only those words', () => {
    for (const command of ['whitelist off', 'whitelist   off', 'WHITELIST OFF', '/minecraft:whitelist off', 'execute run whitelist off']) {
      assert.match(refused(policy, command), /"whitelist off"/, command);
    }
    allowed(policy, 'whitelist add Steve');
    allowed(policy, 'whitelist on');
    assert.match(refused(policy, 'kill @e'), /"kill @e"/);
    allowed(policy, 'kill @e[type=zombie]');
    allowed(policy, 'kill Steve');
  });

  test('execute … run chains are searched for denied roots', () => {
    for (const command of [
      'execute as @a run op x',
      'execute as @a run minecraft:op x',
      'minecraft:execute at @s run execute if entity @s run /op x',
      'EXECUTE AS @a RUN OP x',
    ]) {
      assert.match(refused(policy, command), /"op"/, command);
    }
    allowed(policy, 'execute as @a run say hi');
  });

  test("defaultDeny: false lets the preset list go; the owner's own rules stay", () => {
    const open = compileCommandPolicy(minecraft, { deny: ['give'], defaultDeny: false });
    allowed(open, 'op Steve');
    assert.equal(refused(open, 'give Steve diamond'), 'denied by commandPolicy rule "give"');
  });

  test('no config at all: the preset default deny list applies', () => {
    const defaults = compileCommandPolicy(minecraft);
    for (const command of [
      'op Steve',
      'deop Owner',
      'stop',
      'restart',
      'reload',
      'rl',
      'ban-ip 1.2.3.4',
      'save-off',
      'transfer evil.example 25565 @a',
    ])
      refused(defaults, command);
    allowed(defaults, 'give Steve diamond 1');
    allowed(defaults, 'lp user Steve parent add vip');
    allowed(defaults, 'pardon Steve');
  });
});

describe('command policy: regex rules and allow lists', () => {
  test('/regex/flags is tested against the whole command', () => {
    const policy = compileCommandPolicy(none, { deny: ['/@e\\b/', '/^give \\S+ bedrock/i'], defaultDeny: true });
    assert.equal(refused(policy, 'effect give @e[type=cow] speed'), 'denied by commandPolicy rule "/@e\\b/"');
    assert.match(refused(policy, 'GIVE Steve Bedrock 1'), /bedrock/);
    allowed(policy, 'give Steve diamond');
  });

  test('g and y flags do not make the answer change from one call to the next', () => {
    const policy = compileCommandPolicy(none, { deny: ['/x/gy'], defaultDeny: true });
    for (let i = 0; i < 3; i++) refused(policy, 'x');
  });

  test('with allow, only commands whose every root is allowed (or that match an allow regex) pass', () => {
    const policy = compileCommandPolicy(minecraft, { allow: ['give', 'execute', 'lp user', '/^say [a-z ]+$/'], defaultDeny: true });
    allowed(policy, 'give Steve diamond');
    allowed(policy, '/minecraft:give Steve diamond');
    allowed(policy, 'execute as Steve run give @s diamond');
    allowed(policy, 'lp user Steve parent add vip');
    allowed(policy, 'say thanks for buying');
    assert.match(refused(policy, 'tp Steve 0 100 0'), /not allowed by commandPolicy\.allow.*"tp"/);
    assert.match(refused(policy, 'execute as Steve run tp @s 0 0 0'), /not allowed/);
    assert.match(refused(policy, 'lp group vip permission set *'), /not allowed/);
    // Deny wins over allow.
    assert.match(refused(policy, 'execute as Steve run op Steve'), /"op"/);
    assert.match(refused(compileCommandPolicy(minecraft, { allow: ['op'], defaultDeny: true }), 'op Steve'), /"op"/);
  });

  test('with allow, every place a chain may start a command must be allowed: a selector named run errs on refusing', () => {
    const policy = compileCommandPolicy(minecraft, { allow: ['execute', 'return', 'give'], defaultDeny: true });
    allowed(policy, 'execute as Steve at @s run give @s diamond');
    allowed(policy, 'return run execute as Steve run give @s diamond');
    // The game runs give here, but "at" follows a token run too, so it could have been a command.
    assert.equal(
      refused(policy, 'execute as run at @s run give @s diamond'),
      'not allowed by commandPolicy.allow: no entry matches the command root "at" at a place where this line may start a command (every command after a "run" in an execute or return chain, or after "sudo <player>", must be allowed too)',
    );
    assert.match(
      refused(policy, `execute ${Array.from({ length: 8 }, (_, i) => `run cmd${i}`).join(' ')}`),
      /"cmd0", "cmd1", "cmd2", "cmd3", "cmd4", …/,
    );
  });

  test('an empty allow list allows nothing', () => {
    refused(compileCommandPolicy(none, { allow: [], defaultDeny: true }), 'give Steve diamond');
  });

  test('bad rules are ConfigErrors that name the entry', () => {
    assert.throws(
      () => compileCommandPolicy(none, { deny: ['op', '/(/'], defaultDeny: true }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /commandPolicy\.deny\[1\] "\/\(\/" is not a valid regular expression/);
        return true;
      },
    );
    assert.throws(() => compileCommandPolicy(none, { allow: ['   '], defaultDeny: true }), /commandPolicy\.allow\[0\] is empty/);
    assert.throws(() => compileCommandPolicy(none, { deny: ['minecraft:'], defaultDeny: true }), /commandPolicy\.deny\[0\] is empty/);
  });
});

describe('command policy: nickname injection', () => {
  const give = 'give {player} diamond 1';

  test('CR, LF and NUL are refused on every preset, whatever the rules', () => {
    for (const preset of [minecraft, source, ark, none] as Game[]) {
      const policy = compileCommandPolicy(preset, { allow: ['/.*/s'], defaultDeny: false });
      for (const nickname of ['Steve\nop Steve', 'Steve\r\nop Steve', 'Steve\rstop', 'Steve\0op Steve']) {
        assert.match(refused(policy, render(give, nickname)), /CR, LF or NUL/, `${preset.name}: ${JSON.stringify(nickname)}`);
      }
    }
  });

  test('Source consoles split on ";": any ";" is refused there, even with defaultDeny off', () => {
    const policy = compileCommandPolicy(source, { defaultDeny: false });
    for (const nickname of ['Steve; op Steve', 'Steve;quit', ';rcon_password x']) {
      assert.match(refused(policy, render('sm_givecredits "{player}" 100', nickname)), /";".*second command/);
    }
    allowed(policy, render('sm_givecredits "{player}" 100', 'Steve'));
  });

  test('on Minecraft ";" does not start a second command, so a name with one stays a single (harmless) command', () => {
    const policy = compileCommandPolicy(minecraft);
    allowed(policy, render(give, 'Steve; op Steve'));
  });

  test('a nickname that turns an execute template into an op chain is refused', () => {
    const policy = compileCommandPolicy(minecraft);
    for (const nickname of ['x run op x', 'x run minecraft:op x', 'x run execute run bukkit:op x', 'x run whitelist off']) {
      refused(policy, render('execute as {player} run give @s diamond', nickname));
    }
    allowed(policy, render('execute as {player} run give @s diamond', 'Steve'));
  });

  test('the direct attempts are refused: minecraft:op, /OP, execute as @a run op x, bukkit:op', () => {
    const policy = compileCommandPolicy(minecraft);
    for (const command of ['minecraft:op attacker', '/OP attacker', 'execute as @a run op x', 'bukkit:op attacker']) {
      assert.match(refused(policy, command), /"op"/, command);
    }
  });

  test('ARK: admincheat / cheat prefixes do not hide a denied command, and "|" cannot chain one', () => {
    const policy = compileCommandPolicy(ark);
    assert.match(refused(policy, 'admincheat DoExit'), /"DoExit"/);
    assert.match(refused(policy, 'cheat doexit'), /"DoExit"/);
    assert.match(refused(policy, render('GiveItemToPlayer {player} Blueprint 1 0 0', '1 | admincheat DoExit')), /"DoExit"|"\/\\\|\/"/);
    assert.match(refused(policy, render('ServerChatTo "{player}" thanks', 'x" | SetCheatPlayer true')), /default deny rule/);
    allowed(policy, 'ScriptCommand tcsar addarctotal 76561198000000001 500');
  });
});

describe('preset default deny lists', () => {
  test('every preset list compiles and stops the command that would stop that server', () => {
    const cases = {
      minecraft: 'stop',
      source: 'quit',
      ark: 'DoExit',
      palworld: 'DoExit',
      squad: 'AdminKillServer',
      conan: 'shutdown',
      factorio: '/quit',
      rust: 'global.quit',
    } as const;
    for (const [name, command] of Object.entries(cases)) {
      const policy = compileCommandPolicy(gameFor({ preset: name as keyof typeof cases }));
      assert.match(refused(policy, command), new RegExp(`the ${name} preset's default deny rule`), name);
    }
  });

  test('custom and none presets deny nothing by default: the owner knows the game', () => {
    allowed(compileCommandPolicy(none), 'stop');
    allowed(compileCommandPolicy(gameFor({ preset: 'custom', command: 'who', pattern: '(?<id>.+)' })), 'op x');
  });
});
