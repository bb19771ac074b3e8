import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBook } from '../../src/secret-book.js';
import { createLogger, flushLogger, scrubSecrets, REDACTED, MIN_SCRUB_LENGTH } from '../../src/log.js';

const TOKEN = 'gci_live_9f8e7d6c5b4a';
const PASSWORD = 'rcon-pass-4711';

/** A destination that keeps every chunk, so a test reads exactly what would reach stdout. */
function capture(isTTY = false): { stream: Writable; text: () => string; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  if (isTTY) Object.assign(stream, { isTTY: true });
  const text = () => chunks.join('');
  return {
    stream,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('JSON logging', () => {
  test('one JSON object per line with an ISO time and the level as a label, no pid or hostname', async () => {
    const out = capture();
    const logger = await createLogger({ level: 'info', destination: out.stream });
    logger.info({ event: 'delivery.done', server: 's1', id: '42', outcome: 'done', ms: 12 }, 'delivered');
    logger.debug('not shown at info');
    const [line, ...rest] = out.lines();
    assert.equal(rest.length, 0);
    assert.ok(line);
    assert.equal(line.level, 'info');
    assert.equal(line.msg, 'delivered');
    assert.equal(line.event, 'delivery.done');
    assert.equal(line.id, '42');
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(!('pid' in line) && !('hostname' in line));
  });

  test('is JSON, not pretty, when the destination is not a TTY and pretty is not set', async () => {
    const out = capture(false);
    (await createLogger({ level: 'info', destination: out.stream })).warn('hello');
    assert.equal(out.lines()[0]?.msg, 'hello');
  });

  test('a secret in an error message, its cause, its stack, a nested object and the message is scrubbed', async () => {
    const out = capture();
    const logger = await createLogger({ level: 'info', destination: out.stream, secrets: new SecretBook([TOKEN, PASSWORD]) });
    const cause = new Error(`auth failed for password ${PASSWORD}`);
    const error = Object.assign(new Error(`request with Bearer ${TOKEN} failed`, { cause }), {
      details: { request: { body: `{"note":"${TOKEN}"}` } },
    });
    logger.error({ err: error, nested: { a: { b: [`x${PASSWORD}y`] } }, [`key-${TOKEN}`]: 1 }, 'failed: %s', TOKEN);
    logger.warn({ error: new TypeError(`bad ${PASSWORD}`) }, 'second');
    const text = out.text();
    assert.ok(!text.includes(TOKEN), text);
    assert.ok(!text.includes(PASSWORD), text);
    const [first, second] = out.lines();
    const err = first?.err as { message: string; stack: string; details: { request: { body: string } } };
    assert.equal(err.message, `request with Bearer ${REDACTED} failed: auth failed for password ${REDACTED}`);
    assert.match(err.stack, /caused by: Error: auth failed for password \[Redacted\]/);
    assert.equal(err.details.request.body, `{"note":"${REDACTED}"}`);
    assert.deepEqual(first?.nested, { a: { b: [`x${REDACTED}y`] } });
    assert.equal(first?.msg, `failed: ${REDACTED}`);
    assert.equal((second?.error as { message: string }).message, `bad ${REDACTED}`);
  });

  test('secrets with characters JSON escapes are scrubbed in their escaped form', async () => {
    const tricky = 'pa"ss\\word\n1';
    const out = capture();
    const logger = await createLogger({ level: 'info', destination: out.stream, secrets: new SecretBook([tricky]) });
    logger.info({ value: tricky, inner: JSON.stringify({ value: tricky }) }, 'x');
    const text = out.text();
    assert.ok(!text.includes(JSON.stringify(tricky).slice(1, -1)), text);
    const line = out.lines()[0];
    assert.equal(line?.value, REDACTED);
    assert.equal(line?.inner, `{"value":"${REDACTED}"}`);
  });

  test('known secret keys are redacted even when the value is not registered or is short', async () => {
    const out = capture();
    const logger = await createLogger({ level: 'info', destination: out.stream });
    logger.info(
      { token: 'abc', password: 'p', headers: { authorization: 'Bearer zz' }, executor: { password: 'q' }, server: { password: 'r' } },
      'keys',
    );
    const line = out.lines()[0];
    assert.equal(line?.token, REDACTED);
    assert.equal(line?.password, REDACTED);
    assert.deepEqual(line?.headers, { authorization: REDACTED });
    assert.deepEqual(line?.executor, { password: REDACTED });
    assert.deepEqual(line?.server, { password: REDACTED });
  });

  test('the book is read at each line, so secrets learned later are covered, also by child loggers', async () => {
    const out = capture();
    const known = new SecretBook();
    const logger = await createLogger({ level: 'info', destination: out.stream, secrets: known });
    const child = logger.child({ server: 's1' });
    child.info(`before ${TOKEN}`);
    known.add(TOKEN);
    child.info(`after ${TOKEN}`);
    const [before, after] = out.lines();
    assert.equal(before?.msg, `before ${TOKEN}`);
    assert.equal(after?.msg, `after ${REDACTED}`);
    assert.equal(after?.server, 's1');
  });
});

describe('pretty logging', () => {
  test('is written synchronously in this thread (no transport worker), scrubbed, uncoloured off a TTY', async () => {
    const out = capture();
    const logger = await createLogger({ level: 'info', pretty: true, destination: out.stream, secrets: new SecretBook([TOKEN]) });
    logger.info({ server: 's1', store: 'main', err: new Error(`boom ${TOKEN}`) }, 'delivered');
    // No await: a worker-thread transport could not have produced output yet.
    const text = out.text();
    assert.match(text, /INFO.*delivered/);
    assert.match(text, /INFO: s1: delivered/, 'the server leads the line');
    assert.match(text, /store: "main"|"store":"main"/);
    assert.match(text, /boom \[Redacted\]/);
    assert.ok(!text.includes(TOKEN));
    assert.ok(!text.includes('\u001b['), 'no colour codes when the destination is not a TTY');
    assert.ok(!text.trimStart().startsWith('{'), 'not JSON');
  });

  test('a delivery is one line: server, command, id, outcome and ms in words; buyer text JSON-quoted', async () => {
    const out = capture();
    const logger = (await createLogger({ level: 'info', pretty: true, destination: out.stream })).child({ server: 'itest' });
    logger.info({ event: 'delivery.done', id: '42', outcome: 'done', ms: 12, command: 'give Steve diamond 1' }, 'delivered');
    logger.warn(
      { event: 'delivery.failed', id: '43', outcome: 'failed', ms: 40, command: 'say \u001b[2Jhi', reason: 'No player was found' },
      'delivery failed',
    );
    const lines = out.text().trimEnd().split('\n');
    assert.equal(lines.length, 2, out.text());
    assert.match(lines[0]!, /INFO: itest: delivered "give Steve diamond 1" \(id 42, done, 12 ms\)$/);
    assert.match(lines[1]!, /WARN: itest: delivery failed "say \\u001b\[2Jhi" \(id 43, failed, 40 ms\): No player was found$/);
    assert.ok(!out.text().includes('\u001b'), 'the escape stays text');
    assert.ok(!out.text().includes('delivery.'), 'the event name is for machines: a person reads the message');
  });

  test('is chosen by default when the destination is a TTY, with colours', async () => {
    for (const env of [{}, { NO_COLOR: '' }]) {
      const out = capture(true);
      (await createLogger({ level: 'info', destination: out.stream, env })).warn('tty');
      const text = out.text();
      assert.match(text, /WARN/);
      assert.match(text, /tty/);
      assert.ok(text.includes('\u001b['), `colours with ${JSON.stringify(env)}`);
    }
  });

  test('NO_COLOR present and not empty: no colour on a TTY either (https://no-color.org)', async () => {
    for (const NO_COLOR of ['1', '0', 'false']) {
      const out = capture(true);
      (await createLogger({ level: 'info', destination: out.stream, env: { NO_COLOR } })).warn('tty');
      const text = out.text();
      assert.match(text, /WARN: tty/);
      assert.ok(!text.includes('\u001b'), `no escape with NO_COLOR=${NO_COLOR}: ${JSON.stringify(text)}`);
    }
  });

  test('pretty: false keeps JSON on a TTY', async () => {
    const out = capture(true);
    (await createLogger({ level: 'info', pretty: false, destination: out.stream })).warn('json');
    assert.equal(out.lines()[0]?.msg, 'json');
  });
});

describe('file descriptor destination', () => {
  test('every line is in the file once flushLogger resolves', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'porter-log-test-'));
    const file = join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const logger = await createLogger({ level: 'info', destination: fd, secrets: new SecretBook([PASSWORD]) });
      for (let i = 0; i < 100; i++) logger.info({ i }, `line ${i} ${PASSWORD}`);
      await flushLogger(logger);
      const lines = (await readFile(file, 'utf8')).trim().split('\n');
      assert.equal(lines.length, 100);
      assert.equal((JSON.parse(lines[99] as string) as { msg: string }).msg, `line 99 ${REDACTED}`);
    } finally {
      closeSync(fd);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('flushLogger resolves for a stream destination too', async () => {
    const out = capture();
    const logger = await createLogger({ level: 'info', destination: out.stream });
    logger.info('x');
    await flushLogger(logger);
    assert.equal(out.lines().length, 1);
  });
});

describe('scrubSecrets', () => {
  test('replaces every occurrence, longest secret first', () => {
    assert.equal(scrubSecrets(`a ${TOKEN} b ${TOKEN}`, [TOKEN]), `a ${REDACTED} b ${REDACTED}`);
    assert.equal(scrubSecrets('xx secret-long yy secret zz', ['secret', 'secret-long']), `xx ${REDACTED} yy ${REDACTED} zz`);
  });

  test('treats regular expression characters literally', () => {
    assert.equal(scrubSecrets('p.a*s+s? and paaass', ['p.a*s+s?']), `${REDACTED} and paaass`);
  });

  test('covers the URL-encoded form', () => {
    const secret = 'p@ss w/rd';
    assert.equal(scrubSecrets(`url?pw=${encodeURIComponent(secret)}`, [secret]), `url?pw=${REDACTED}`);
  });

  test(`leaves secrets shorter than ${MIN_SCRUB_LENGTH} characters alone, so a 1-character password cannot mangle every line`, () => {
    assert.equal(scrubSecrets('a bad abc', ['a', 'abc']), 'a bad abc');
    assert.equal(scrubSecrets('xx abcd', ['abcd']), `xx ${REDACTED}`);
  });

  test('with no secrets returns the text unchanged', () => {
    assert.equal(scrubSecrets('plain', []), 'plain');
  });
});
