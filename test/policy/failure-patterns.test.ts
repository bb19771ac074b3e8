import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/errors.js';
import { gameFor } from '../../src/games/registry.js';
import { compileFailurePatterns, failureIn, MAX_FAILURE_REASON } from '../../src/policy/failure-patterns.js';

const minecraft = gameFor({ preset: 'minecraft' });
const source = gameFor({ preset: 'source' });

describe('failureIn with the Minecraft preset', () => {
  const patterns = compileFailurePatterns(minecraft);

  test('the answers that mean a failed delivery give the answer as the reason', () => {
    const failures = [
      'No player was found',
      'Unknown or incomplete command, see below for error\ngive Steve diamond<--[HERE]',
      'Unknown or incomplete command. See below for error',
      'Incorrect argument for command\ngive Steve diamond 1 x<--[HERE]',
      "Unknown item 'minecraft:dimond'\n...ve Steve dimond<--[HERE]",
      'That player does not exist',
      'No entity was found',
      'Expected whitespace to end one argument, but found trailing data\n...amond 1 2<--[HERE]',
      "Invalid integer 'lots'",
      "Can't give more than 6400 of [Diamond]",
      'Unknown command. Type "/help" for help.',
      'That player cannot be found',
    ];
    for (const answer of failures) assert.notEqual(failureIn(answer, patterns), null, answer);
    assert.equal(
      failureIn('Unknown or incomplete command, see below for error\ngive Steve diamond<--[HERE]', patterns),
      'Unknown or incomplete command, see below for error give Steve diamond<--[HERE]',
    );
  });

  test('answers of commands that ran are not failures', () => {
    for (const answer of [
      'Gave 1 [Diamond] to Steve',
      '',
      'Added Steve to the whitelist',
      'Set the time to 1000',
      'Made Steve a server operator',
    ]) {
      assert.equal(failureIn(answer, patterns), null, answer);
    }
  });

  test('the words only count at the start of a line (a whispered text is not an error)', () => {
    assert.equal(failureIn('You whisper to Steve: No player was found, sorry', patterns), null);
    assert.notEqual(failureIn('Gave 1 [Diamond] to Steve\nNo player was found', patterns), null);
  });

  test('case does not matter; colour codes are dropped from the reason', () => {
    assert.equal(failureIn('§cno player was found§r', patterns), 'no player was found');
  });

  test('the reason is trimmed and at most 500 characters, cut with an ellipsis', () => {
    const answer = `   Incorrect argument for command ${'x'.repeat(2000)}   `;
    const reason = failureIn(answer, patterns);
    assert.ok(reason);
    assert.equal(Array.from(reason).length, MAX_FAILURE_REASON);
    assert.ok(reason.startsWith('Incorrect argument for command xxx'));
    assert.ok(reason.endsWith('…'));
  });
});

describe('compileFailurePatterns with the config', () => {
  test('an array adds to the preset patterns, case-insensitively', () => {
    const patterns = compileFailurePatterns(minecraft, ['^Error: ', 'insufficient funds']);
    assert.equal(failureIn('ERROR: kit not found', patterns), 'ERROR: kit not found');
    assert.equal(failureIn('Insufficient Funds', patterns), 'Insufficient Funds');
    assert.equal(failureIn('No player was found', patterns), 'No player was found');
    assert.equal(failureIn('Gave 1 [Diamond] to Steve', patterns), null);
  });

  test('{ mode: "add" } adds too', () => {
    const patterns = compileFailurePatterns(minecraft, { mode: 'add', patterns: ['^nope$'] });
    assert.notEqual(failureIn('nope', patterns), null);
    assert.notEqual(failureIn('No player was found', patterns), null);
  });

  test('{ mode: "replace" } drops the preset patterns', () => {
    const patterns = compileFailurePatterns(minecraft, { mode: 'replace', patterns: ['^kit .* does not exist'] });
    assert.equal(failureIn('No player was found', patterns), null);
    assert.notEqual(failureIn('Kit vip does not exist', patterns), null);
  });

  test('no config: the preset patterns, and a copy (the preset is not changed)', () => {
    const patterns = compileFailurePatterns(source);
    assert.deepEqual(patterns, [...source.failurePatterns]);
    patterns.push(/x/);
    assert.equal(compileFailurePatterns(source).length, source.failurePatterns.length);
    assert.notEqual(failureIn('Unknown command "sm_givecredits"', patterns), null);
  });

  test('an invalid pattern is a ConfigError naming the entry', () => {
    assert.throws(
      () => compileFailurePatterns(minecraft, ['ok', '(']),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /failurePatterns entry 1/);
        assert.equal(error.exitCode, 78);
        return true;
      },
    );
  });
});
