import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { webhookKey } from '../../src/config/webhook-secret.js';
import { readEventFacts } from '../../src/webhook/event.js';
import { checkHeaders, type WebhookScheme } from '../../src/webhook/scheme.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * Whatever bytes a client sends as headers and body, verification never throws, and it passes
 * only when one entry is the real MAC of exactly those bytes under a configured key.
 */

const KEY = webhookKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
const NOW = 1_760_000_000_000;
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', ' ', ',', 'v1,', 'v1', '=', '\u0000'));

describe('webhook verification against any input', () => {
  test('standard scheme: never throws; verified only with the real MAC of the exact id, timestamp and body', () => {
    fc.assert(
      fc.property(
        text,
        fc.oneof(text, fc.integer({ min: -1e12, max: 1e13 }).map(String)),
        fc.array(text, { maxLength: 4 }),
        fc.uint8Array({ maxLength: 512 }),
        fc.boolean(),
        fc.integer({ min: -400, max: 400 }),
        (id, timestamp, garbage, body, signIt, skewS) => {
          const ts = signIt ? String(Math.floor(NOW / 1000) + skewS) : timestamp;
          const mac = createHmac('sha256', KEY).update(`${id}.${ts}.`).update(body).digest('base64');
          const entries = signIt ? [...garbage, `v1,${mac}`] : garbage;
          const headers: Record<string, string> = { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': entries.join(' ') };
          const check = checkHeaders('standard', (name) => headers[name], NOW, 300);
          const verified = check.ok && check.value.matches(body, [KEY]);
          const honest = signIt && id !== '' && Math.abs(skewS) <= 300;
          if (verified) assert.ok(signIt || garbage.some((entry) => entry === `v1,${mac}`), 'verified without the real MAC');
          if (honest) assert.equal(verified, true, 'an honest signature was refused');
        },
      ),
      fcOptions({ numRuns: 400 }),
    );
  });

  test('single-header scheme: never throws; verified only with the MAC of the body', () => {
    const scheme: WebhookScheme = { header: 'x-sig', encoding: 'hex', prefix: 'sha256=' };
    fc.assert(
      fc.property(text, fc.uint8Array({ maxLength: 512 }), fc.boolean(), (value, body, signIt) => {
        const mac = createHmac('sha256', KEY).update(body).digest('hex');
        const header = signIt ? `sha256=${mac}` : value;
        const check = checkHeaders(scheme, (name) => (name === 'x-sig' ? header : undefined), NOW, 300);
        const verified = check.ok && check.value.matches(body, [KEY]);
        assert.equal(verified, signIt || header.toLowerCase() === `sha256=${mac}`);
      }),
      fcOptions({ numRuns: 300 }),
    );
  });

  test('reading the event from any bytes never throws and yields only strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 256 }),
          fc.json().map((json) => Buffer.from(json)),
        ),
        (body) => {
          const facts = readEventFacts(body);
          if (facts) {
            assert.ok(facts.type === undefined || typeof facts.type === 'string');
            assert.ok(facts.eventId === undefined || typeof facts.eventId === 'string');
          }
        },
      ),
      fcOptions({ numRuns: 300 }),
    );
  });
});
