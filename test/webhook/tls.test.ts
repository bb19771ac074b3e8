import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { systemClock } from '../../src/clock.js';
import { webhookKey } from '../../src/config/webhook-secret.js';
import { startWebhookServer } from '../../src/webhook/server.js';
import { WebhookTlsError } from '../../src/webhook/tls.js';
import { eventBody, signedHeaders } from '../peers/webhook-sender.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const fixture = (name: string) => fileURLToPath(new URL(`../../../test/fixtures/tls/${name}`, import.meta.url));

/** Posts a signed event over HTTPS trusting `ca`; answers the status and the certificate's common name. */
function postTls(port: number, ca: Buffer | string): Promise<{ status: number; subject: string }> {
  const body = eventBody({});
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/webhook', method: 'POST', ca, agent: false, headers: signedHeaders(SECRET, body) },
      (res) => {
        const subject = String((res.socket as TLSSocket).getPeerCertificate().subject.CN);
        res.resume().on('end', () => resolve({ status: res.statusCode ?? 0, subject }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the webhook listener over TLS', () => {
  test('serves HTTPS with the configured certificate, and a SIGHUP reload picks up a renewed one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'porter-webhook-tls-'));
    const tls = { certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') };
    copyFileSync(fixture('one-cert.pem'), tls.certFile);
    copyFileSync(fixture('one-key.pem'), tls.keyFile);
    let woken = 0;
    const server = await startWebhookServer({
      listen: '127.0.0.1:0',
      tls,
      toleranceS: 300,
      maxBodyBytes: 65536,
      scheme: 'standard',
      secretsFor: () => [webhookKey(SECRET)],
      wake: () => woken++,
      logger: pino({ level: 'silent' }),
      clock: systemClock,
    });
    try {
      const one = readFileSync(fixture('one-cert.pem'));
      const two = readFileSync(fixture('two-cert.pem'));
      assert.deepEqual(await postTls(server.port, one), { status: 204, subject: 'porter-test-one' });

      // A renewal writes new files; the listener goes on with the old ones until told.
      copyFileSync(fixture('two-cert.pem'), tls.certFile);
      copyFileSync(fixture('two-key.pem'), tls.keyFile);
      assert.equal((await postTls(server.port, one)).subject, 'porter-test-one');
      await server.reloadTls();
      assert.deepEqual(await postTls(server.port, two), { status: 204, subject: 'porter-test-two' });

      // A file that cannot be read on reload keeps the running certificate.
      rmSync(tls.keyFile);
      await server.reloadTls();
      assert.equal((await postTls(server.port, two)).subject, 'porter-test-two');
      assert.equal(woken, 4);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a certificate file that cannot be read at start is a configuration error naming the key', async () => {
    await assert.rejects(
      startWebhookServer({
        listen: '127.0.0.1:0',
        tls: { certFile: '/nonexistent/cert.pem', keyFile: fixture('one-key.pem') },
        toleranceS: 300,
        maxBodyBytes: 65536,
        scheme: 'standard',
        secretsFor: () => undefined,
        wake: () => undefined,
        logger: pino({ level: 'silent' }),
        clock: systemClock,
      }),
      (error: unknown) =>
        error instanceof WebhookTlsError && error.exitCode === 78 && /webhook\.tls\.certFile: cannot read/.test(error.message),
    );
  });
});
