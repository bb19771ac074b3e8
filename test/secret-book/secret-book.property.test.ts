import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { createApiClient } from '../../src/api/wire/client.js';
import { errorForAnswer } from '../../src/api/answers/problem.js';
import type { Config } from '../../src/config/schema.js';
import { configSecrets } from '../../src/config/secrets.js';
import { startHealthServer } from '../../src/health/server.js';
import { createLogger } from '../../src/log.js';
import { SecretBook } from '../../src/secret-book.js';
import { fcOptions } from '../helpers/fc-options.js';
import { fakeDaemon, fakeServer, manualClock } from '../health/fakes.js';

/*
 * One book, every way porter learns a secret, every way text leaves it: whatever the order, a
 * secret the book has learned is in no log line, no API error message and no /healthz body
 * written after that.
 */

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// "zq" marks a secret: no text porter writes around it holds those letters, so a hit is a leak, not
// a coincidence. The other characters are those that JSON and URLs escape.
const secretArb = fc
  .string({ unit: fc.constantFrom(...'abcdefgh0123_-"\\\n /%é€'.split('')), minLength: 2, maxLength: 12 })
  .map((tail) => `zq${tail}`);

/** How porter comes to know a secret. */
const learning = fc.oneof(
  fc.record({ kind: fc.constant('config' as const), secret: secretArb }),
  fc.record({ kind: fc.constant('rotated' as const), secret: secretArb }),
  fc.record({ kind: fc.constant('reload' as const), secret: secretArb, password: secretArb, webhook: secretArb }),
  fc.record({ kind: fc.constant('init' as const), secret: secretArb }),
);
/** Where a secret could leave porter. */
const leaving = fc.record({ kind: fc.constantFrom('log' as const, 'error' as const, 'healthz' as const), pick: fc.nat() });

/** Every form of a secret that would give it away: as it is and JSON-escaped (a log line, a JSON body). */
function leaked(text: string, secrets: readonly string[]): string | undefined {
  return secrets.find((secret) => text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1)));
}

function capture(): { stream: Writable; take: () => string } {
  let chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return {
    stream,
    take: () => {
      const text = chunks.join('');
      chunks = [];
      return text;
    },
  };
}

/** A configuration as configSecrets reads it: only the secret-bearing keys are there. */
function reloadedConfig(token: string, password: string, webhookSecret: string): Config {
  return {
    api: { token },
    stores: { second: { token: `${token}2`, webhookSecret } },
    servers: [{ executor: { type: 'rcon', password } }],
  } as unknown as Config;
}

test('a secret the book learned, at any time and by any path, never leaves in a log line, an error message or /healthz', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'porter-secret-book-'));
  dirs.push(dir);
  await fc.assert(
    fc.asyncProperty(secretArb, fc.array(fc.oneof(learning, leaving), { minLength: 1, maxLength: 25 }), async (initialToken, steps) => {
      const book = new SecretBook();
      const out = capture();
      const logger = await createLogger({ level: 'info', pretty: false, destination: out.stream, secrets: book });
      // The token file, as a store owner rotates it; the client reads it again after a 401.
      let tokenOnDisk = initialToken;
      const client = createApiClient(
        { baseUrl: 'https://seller.example.com', token: initialToken, timeoutMs: 1000, routes: undefined } as unknown as Config['api'],
        { logger: pino({ level: 'silent' }), secrets: book, readToken: () => Promise.resolve(tokenOnDisk) },
      );
      const server = fakeServer('1b4e28ba-2fa1-11d2-883f-0016d3cca427');
      const health = await startHealthServer({
        listen: '127.0.0.1:0',
        daemon: fakeDaemon([server.part], dir),
        logger: pino({ level: 'silent' }),
        clock: manualClock(),
        secrets: book,
      });
      let generation = 0;
      const learned: string[] = [initialToken];
      try {
        for (const step of steps) {
          if (step.kind === 'config') book.add(...configSecrets(reloadedConfig(step.secret, `${step.secret}pw`, `${step.secret}wh`)));
          if (step.kind === 'init') book.add(step.secret);
          if (step.kind === 'reload') book.add(...configSecrets(reloadedConfig(step.secret, step.password, step.webhook)));
          if (step.kind === 'rotated') {
            tokenOnDisk = step.secret;
            if (await client.renewToken(generation)) generation++;
          }
          if (step.kind === 'config') learned.push(step.secret, `${step.secret}pw`, `${step.secret}wh`, `${step.secret}2`);
          if (step.kind === 'reload') learned.push(step.secret, step.password, step.webhook, `${step.secret}2`);
          if (step.kind === 'init') learned.push(step.secret);
          if (step.kind === 'rotated') learned.push(step.secret);
          if (step.kind !== 'log' && step.kind !== 'error' && step.kind !== 'healthz') continue;

          const secret = learned[step.pick % learned.length]!;
          const text = `before ${secret} after, and {"nested":${JSON.stringify(secret)}}`;
          let written: string;
          if (step.kind === 'log') {
            logger.error({ err: new Error(text, { cause: new Error(text) }), detail: { text } }, text);
            written = out.take();
          } else if (step.kind === 'error') {
            const body = JSON.stringify({ type: 'about:blank', title: text, detail: text, code: secret });
            written = errorForAnswer({ status: 500, body }, { route: 'pull', serverId: 's1' }, client.redact).message;
          } else {
            server.state.loop.lastApiError = text;
            const response = await fetch(`http://127.0.0.1:${health.port}/healthz`, { signal: AbortSignal.timeout(10_000) });
            written = await response.text();
          }
          const leak = leaked(written, learned);
          assert.equal(leak, undefined, `${step.kind} gave away ${JSON.stringify(leak)}: ${written}`);
        }
      } finally {
        await health.close();
        await client.close();
      }
    }),
    fcOptions({ numRuns: 60 }),
  );
});
