import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { reportFatal } from '../../src/cli/common.js';
import { lastResort } from '../../src/cli/last-resort.js';
import { ConfigError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { WITHHELD } from '../../src/scrub.js';
import type { SecretBook } from '../../src/secret-book.js';

/*
 * Should the scrubber itself throw, what is printed is a plain line saying so: never the text it
 * was given, never what it threw. The scrubber once threw V8's "Regular expression too large",
 * whose message is the pattern (every secret), and Node printed it.
 */

const SECRET = 'gci_SECRET_4f3e2d1c0b';

/** A book whose scrubber fails the way the old one did: with every secret in its message. */
const failing = {
  scrub: (): string => {
    throw new SyntaxError(`Invalid regular expression: /${SECRET}|rcon-pw/: Regular expression too large`);
  },
} as unknown as SecretBook;

describe('a scrubber that throws', () => {
  const exitCode = process.exitCode;
  afterEach(() => {
    process.exitCode = exitCode;
  });

  test('the fatal-error path prints that the message was withheld, with its exit code, and neither the message nor the failure', (t) => {
    const written: string[] = [];
    t.mock.method(process.stderr, 'write', (text: string) => written.push(text));
    reportFatal(new ConfigError(`PORTER_API_TOKEN ${SECRET} is wrong`), failing);
    t.mock.restoreAll();
    const text = written.join('');
    assert.ok(!text.includes(SECRET), text);
    assert.ok(text.includes(WITHHELD), text);
    assert.equal(process.exitCode, 78);
  });

  test('a log line becomes a line that says one was withheld, still JSON, with neither the line nor the failure', async () => {
    const lines: string[] = [];
    const logger = await createLogger({
      level: 'info',
      pretty: false,
      destination: { write: (line: string) => lines.push(line) },
      secrets: failing,
    });
    logger.error({ event: 'test.line', err: new Error(`refused ${SECRET}`) }, `token ${SECRET}`);
    const text = lines.join('');
    assert.ok(!text.includes(SECRET), text);
    const line = JSON.parse(text) as { event?: string; level?: string; msg?: string };
    assert.equal(line.event, 'log.withheld');
    assert.equal(line.level, 'error');
  });

  test('an error nobody caught is printed scrubbed, or withheld whole, and gives its exit code', () => {
    const written: string[] = [];
    const stderr = { write: (text: string) => written.push(text) };
    assert.equal(lastResort(failing, stderr)(new Error(`boom ${SECRET}`)), 1);
    assert.equal(lastResort(failing, stderr)(new ConfigError(`bad ${SECRET}`)), 78);
    assert.equal(lastResort({ scrub: (text) => text.replaceAll(SECRET, '[Redacted]') }, stderr)(new Error(`boom ${SECRET}`)), 1);
    const text = written.join('');
    assert.ok(!text.includes(SECRET), text);
    assert.match(text, /porter: unexpected error, please report it: Error: boom \[Redacted\]\n {4}at /);
  });
});
