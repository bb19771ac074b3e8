import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AnswerFrame } from '../../../src/protocols/telnet/answer.js';
import { endsSession, isLogLine, newEndMarker } from '../../../src/protocols/telnet/console-text.js';
import { TelnetLineReader } from '../../../src/protocols/telnet/line-reader.js';
import { ConsoleLogin } from '../../../src/protocols/telnet/login.js';

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));

describe('telnet line reader', () => {
  test('CRLF lines, split anywhere across reads, a UTF-8 character split too', () => {
    const reader = new TelnetLineReader(1000);
    const stream = bytes('Logon successful.\r\n\r\nTotal of 1 in the game\r\nNamé ☃\r\n');
    const lines: string[] = [];
    for (let i = 0; i < stream.length; i += 3) lines.push(...reader.push(stream.subarray(i, i + 3)).lines);
    assert.deepEqual(lines, ['Logon successful.', '', 'Total of 1 in the game', 'Namé ☃']);
  });

  test('a bare LF ends a line too; a partial last line waits for its end', () => {
    const reader = new TelnetLineReader(1000);
    assert.deepEqual(reader.push(bytes('one\ntwo\r\nthr')).lines, ['one', 'two']);
    assert.deepEqual(reader.push(bytes('ee\r\n')).lines, ['three']);
  });

  test('NUL bytes (log lines for a session not logged in yet) are dropped', () => {
    const reader = new TelnetLineReader(1000);
    assert.deepEqual(reader.push(bytes('Please enter password:\r\n', [0, 0], 'Logon', [0], ' successful.\r\n')).lines, [
      'Please enter password:',
      'Logon successful.',
    ]);
  });

  test('telnet negotiation (IAC DO/WILL, IAC SB … IAC SE, IAC IAC) is dropped and never answered', () => {
    const reader = new TelnetLineReader(1000);
    const stream = bytes(
      [255, 253, 1],
      'Please ',
      [255, 251, 3, 255, 250, 24, 1, 255, 240],
      'enter password:',
      [255, 255, 255, 241],
      '\r\n',
    );
    const lines: string[] = [];
    for (const byte of stream) lines.push(...reader.push(Buffer.from([byte])).lines);
    assert.deepEqual(lines, ['Please enter password:']);
  });

  test('a line longer than the cap fails the reader for good, after the lines before it', () => {
    const reader = new TelnetLineReader(10);
    assert.deepEqual(reader.push(bytes('short\r\n0123456789A')), { lines: ['short'], overflow: true });
    assert.deepEqual(reader.push(bytes('\r\nmore\r\n')), { lines: [], overflow: true });
  });
});

describe('telnet console texts', () => {
  test('log lines are the server log shape, whatever the level', () => {
    assert.ok(isLogLine("2017-08-10T16:49:31 4187.359 INF Executing command 'listplayers' by Telnet from 10.0.7.123:39330"));
    assert.ok(isLogLine('2024-08-03T09:22:30 26471.969 WRN Entity [type=EntityZombie] fell off the world'));
    assert.ok(isLogLine('2024-08-03T09:22:30 0.000 EXC NullReferenceException'));
    assert.ok(!isLogLine('0. id=171, 2017-08-10T16:49:31 4187.359 INF x, pos=(1, 2, 3)'));
    assert.ok(!isLogLine('Total of 0 in the game'));
    assert.ok(!isLogLine("*** ERROR: unknown command 'x'"));
  });

  test('end markers are fresh each time and answered by the unknown-command line', () => {
    const a = newEndMarker();
    const b = newEndMarker();
    assert.notEqual(a.command, b.command);
    assert.match(a.command, /^porter-end-[0-9a-f]{32}$/);
    assert.equal(a.reply, `*** ERROR: unknown command '${a.command}'`);
  });

  test('"exit" in any case, with blanks around it, ends the session; with an argument it is a command', () => {
    assert.ok(endsSession('exit'));
    assert.ok(endsSession('  EXIT \t'));
    assert.ok(!endsSession('exit now'));
    assert.ok(!endsSession('say exit'));
  });
});

describe('telnet answer frame', () => {
  const marker = { command: 'porter-end-1', reply: "*** ERROR: unknown command 'porter-end-1'" };

  test('the answer is every non-log line before the marker reply, blank edges trimmed', () => {
    const frame = new AnswerFrame(marker.reply, 1000);
    const steps = [
      "2017-08-10T16:49:31 4187.359 INF Executing command 'lp' by Telnet from 10.0.7.123:39330",
      '',
      '0. id=171, Alice, pos=(1, 2, 3)',
      '2017-08-10T16:49:31 4187.360 WRN other thread',
      'Total of 1 in the game',
      '',
      marker.reply,
    ].map((line) => frame.take(line));
    assert.deepEqual(steps, ['more', 'more', 'more', 'more', 'more', 'more', 'end']);
    assert.equal(frame.text(), '0. id=171, Alice, pos=(1, 2, 3)\nTotal of 1 in the game');
    assert.equal(frame.lineCount, 4);
  });

  test('another unknown-command line is part of the answer, not its end', () => {
    const frame = new AnswerFrame(marker.reply, 1000);
    assert.equal(frame.take("*** ERROR: unknown command 'porter-end-2'"), 'more');
    assert.equal(frame.take(marker.reply), 'end');
    assert.equal(frame.text(), "*** ERROR: unknown command 'porter-end-2'");
  });

  test('an answer over the cap overflows, newlines counted', () => {
    const frame = new AnswerFrame(marker.reply, 10);
    assert.equal(frame.take('12345'), 'more');
    assert.equal(frame.take('123'), 'more');
    assert.equal(frame.take('x'), 'overflow');
  });
});

describe('telnet console login', () => {
  const marker = { command: 'porter-end-sync', reply: "*** ERROR: unknown command 'porter-end-sync'" };

  test('password on the prompt, then one marker after "Logon successful.", ready on its reply', () => {
    const login = new ConsoleLogin('pw', () => marker);
    assert.deepEqual(login.take('2024-01-01T00:00:00 1.000 INF noise'), { kind: 'wait' });
    assert.deepEqual(login.take('Please enter password:'), { kind: 'write', line: 'pw' });
    assert.deepEqual(login.take('Please enter password:'), { kind: 'wait' });
    assert.deepEqual(login.take('Logon successful.'), { kind: 'write', line: marker.command });
    assert.deepEqual(login.take('*** Connected with 7DTD server.'), { kind: 'wait' });
    assert.deepEqual(login.take("Press 'help' to get a list of all commands. Press 'exit' to end session."), { kind: 'wait' });
    assert.deepEqual(login.take(marker.reply), { kind: 'ready' });
  });

  test('a console that asks no password gets none: the banner starts the marker', () => {
    const login = new ConsoleLogin('pw', () => marker);
    assert.deepEqual(login.take('*** Connected with 7DTD server.'), { kind: 'write', line: marker.command });
    assert.deepEqual(login.take(marker.reply), { kind: 'ready' });
    assert.equal(login.passwordSent, false);
  });

  test('"Logon successful." before porter sent a password is not taken for a login', () => {
    const login = new ConsoleLogin('pw', () => marker);
    assert.deepEqual(login.take('Logon successful.'), { kind: 'wait' });
  });

  test('a wrong password and too many failures are rejections', () => {
    const login = new ConsoleLogin('pw', () => marker);
    login.take('Please enter password:');
    assert.deepEqual(login.take('Password incorrect, please enter password:'), { kind: 'rejected', reason: 'incorrect' });
    assert.deepEqual(new ConsoleLogin('pw').take('Too many failed login attempts!'), { kind: 'rejected', reason: 'too-many' });
  });
});
