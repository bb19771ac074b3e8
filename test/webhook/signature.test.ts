import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { webhookKey, webhookSecretProblem } from '../../src/config/webhook-secret.js';
import { checkHeaders, type WebhookScheme } from '../../src/webhook/scheme.js';

/**
 * The verifiers against signatures made by the `standardwebhooks` package (an independent
 * implementation of the scheme), and by hand for the single-header scheme.
 */

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OLD_SECRET = 'whsec_dGhlIG9sZCBzZWNyZXQgb2YgdGhlIHN0b3Jl';
const NOW = 1_760_000_000_000;
const BODY = Buffer.from('{"type":"order.payment_approved","eventId":"evt_1","data":{"order":{"buyer":{"email":"a@b.c"}}}}');

function signed(secret: string, options: { id?: string; at?: number; body?: Buffer } = {}) {
  const id = options.id ?? 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
  const at = options.at ?? NOW;
  const signature = new Webhook(secret).sign(id, new Date(at), (options.body ?? BODY).toString('utf8'));
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at / 1000)), 'webhook-signature': signature };
}

function verify(headers: Record<string, string>, keys: string[], options: { body?: Buffer; scheme?: WebhookScheme; now?: number } = {}) {
  const check = checkHeaders(options.scheme ?? 'standard', (name) => headers[name], options.now ?? NOW, 300);
  if (!check.ok) return check.reason;
  return check.value.matches(options.body ?? BODY, keys.map(webhookKey)) ? 'ok' : 'signature';
}

describe('Standard Webhooks verification', () => {
  test('an event signed by the standardwebhooks package verifies', () => {
    assert.equal(verify(signed(SECRET), [SECRET]), 'ok');
  });

  test('rotation: several signatures, any one matching any key is enough', () => {
    const both = signed(SECRET);
    const old = signed(OLD_SECRET)['webhook-signature'];
    both['webhook-signature'] = `${old} ${both['webhook-signature']}`;
    assert.equal(verify(both, [SECRET]), 'ok');
    assert.equal(verify(both, [OLD_SECRET]), 'ok');
    assert.equal(verify(signed(OLD_SECRET), [SECRET, OLD_SECRET]), 'ok');
    // Entries of other versions are skipped, not an error.
    both['webhook-signature'] = `v1a,c29tZXRoaW5n ${both['webhook-signature']}`;
    assert.equal(verify(both, [SECRET]), 'ok');
  });

  test('a wrong secret, a changed body, id or timestamp: refused as a signature', () => {
    assert.equal(verify(signed(OLD_SECRET), [SECRET]), 'signature');
    assert.equal(verify(signed(SECRET), [SECRET], { body: Buffer.from(BODY.toString().replace('a@b.c', 'x@b.c')) }), 'signature');
    assert.equal(verify({ ...signed(SECRET), 'webhook-id': 'msg_other' }, [SECRET]), 'signature');
    assert.equal(verify({ ...signed(SECRET), 'webhook-timestamp': String(NOW / 1000 + 1) }, [SECRET]), 'signature');
  });

  test('a missing header: refused', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const headers: Record<string, string> = signed(SECRET);
      delete headers[name];
      assert.equal(verify(headers, [SECRET]), 'signature', name);
    }
  });

  test('stale and future timestamps beyond the tolerance are refused; inside it they pass', () => {
    assert.equal(verify(signed(SECRET, { at: NOW - 301_000 }), [SECRET]), 'timestamp');
    assert.equal(verify(signed(SECRET, { at: NOW + 301_000 }), [SECRET]), 'timestamp');
    assert.equal(verify(signed(SECRET, { at: NOW - 299_000 }), [SECRET]), 'ok');
    assert.equal(verify(signed(SECRET, { at: NOW + 299_000 }), [SECRET]), 'ok');
  });

  test('malformed headers are refused, never thrown on', () => {
    const good = signed(SECRET);
    const mac = good['webhook-signature'].slice(3);
    for (const [name, value] of [
      ['webhook-timestamp', '17600000e2'],
      ['webhook-timestamp', '-1760000000'],
      ['webhook-timestamp', ''],
      ['webhook-signature', mac],
      ['webhook-signature', `v1,${mac.slice(0, -2)}`],
      ['webhook-signature', `v1,${mac}AAAA`],
      ['webhook-signature', 'v1,'],
      ['webhook-signature', `v2,${mac}`],
      ['webhook-signature', `v1, ${mac}`],
      ['webhook-id', ''],
    ] as const) {
      assert.notEqual(verify({ ...good, [name]: value }, [SECRET]), 'ok', `${name}: ${value}`);
    }
  });

  test('a secret without whsec_ is its own UTF-8 bytes; with it, base64', () => {
    assert.deepEqual(webhookKey('plain-secret-ü'), Buffer.from('plain-secret-ü', 'utf8'));
    assert.deepEqual(webhookKey('whsec_AAEC'), Buffer.from([0, 1, 2]));
    const raw = new Webhook(Buffer.from('plain-secret-ü', 'utf8'), { format: 'raw' });
    const headers = {
      'webhook-id': 'm',
      'webhook-timestamp': String(NOW / 1000),
      'webhook-signature': raw.sign('m', new Date(NOW), BODY.toString()),
    };
    assert.equal(verify(headers, ['plain-secret-ü']), 'ok');
  });

  test('secrets that cannot be what the store gave are named', () => {
    assert.match(webhookSecretProblem('whsec_abc\r', 'api.webhookSecret') ?? '', /carriage return/);
    assert.match(webhookSecretProblem('two words', 'api.webhookSecret') ?? '', /whitespace/);
    assert.match(webhookSecretProblem('whsec_not*base64', 'api.webhookSecret') ?? '', /not base64/);
    assert.equal(webhookSecretProblem(SECRET, 'api.webhookSecret'), undefined);
    assert.equal(webhookSecretProblem('raw-secret', 'api.webhookSecret'), undefined);
  });
});

describe('the single-header scheme', () => {
  const key = 'shared-secret-text';
  const mac = createHmac('sha256', key).update(BODY).digest();

  test('hex with a prefix, base64 without: verified over the raw body', () => {
    const hex: WebhookScheme = { header: 'X-Signature-256', encoding: 'hex', prefix: 'sha256=' };
    assert.equal(verify({ 'x-signature-256': `sha256=${mac.toString('hex')}` }, [key], { scheme: hex }), 'ok');
    assert.equal(verify({ 'x-signature-256': `sha256=${mac.toString('hex').toUpperCase()}` }, [key], { scheme: hex }), 'ok');
    assert.equal(verify({ 'x-signature-256': mac.toString('hex') }, [key], { scheme: hex }), 'signature');
    const b64: WebhookScheme = { header: 'x-hmac', encoding: 'base64' };
    assert.equal(verify({ 'x-hmac': mac.toString('base64') }, [key], { scheme: b64 }), 'ok');
    assert.equal(verify({ 'x-hmac': mac.toString('base64') }, ['other'], { scheme: b64 }), 'signature');
    assert.equal(verify({ 'x-hmac': mac.toString('hex') }, [key], { scheme: b64 }), 'signature');
    assert.equal(verify({}, [key], { scheme: b64 }), 'signature');
    assert.equal(verify({ 'x-hmac': mac.toString('base64') }, [key], { scheme: b64, body: Buffer.from('{}') }), 'signature');
  });
});
