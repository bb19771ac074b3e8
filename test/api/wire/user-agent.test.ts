import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createApiClient, userAgent } from '../../../src/api/wire/client.js';
import { checkToken } from '../../../src/api/answers/token-check.js';
import { SIM_SERVER_ID } from '../../../src/sim/seller-api.js';
import { apiConfig, silent } from '../helpers.js';

/**
 * porter names itself to the store on every request (docs/design.md#the-api-contract). A plain
 * node:http server records the headers each request arrived with: the simulated Seller API keeps
 * no headers, and this checks the wire, not what the client meant to send.
 */

const { version } = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string };

describe('User-Agent', () => {
  let server: Server;
  let url = '';
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push({ path: req.url ?? '', headers: req.headers });
      req.resume();
      req.on('end', () => {
        if (req.method === 'GET') {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[]}');
        } else {
          res.writeHead(204).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('is porter/<package version> (node/<version>; <platform>)', () => {
    assert.equal(userAgent(), `porter/${version} (node/${process.versions.node}; ${process.platform})`);
    assert.match(userAgent(), /^porter\/\d+\.\d+\.\d+\S* \(node\/\d+\.\d+\.\d+; [a-z0-9]+\)$/);
  });

  test('every route carries it: pull, done, fail and the token check', async () => {
    const client = createApiClient(apiConfig(url), { logger: silent() });
    try {
      seen.length = 0;
      const pull = { route: 'pull' as const, serverId: SIM_SERVER_ID };
      await client.send({ method: 'POST', path: client.routes.pull(SIM_SERVER_ID), json: { onlineIdentifiers: [] }, context: pull });
      await client.send({ method: 'POST', path: client.routes.done(SIM_SERVER_ID, '7'), context: { route: 'done' } });
      await client.send({
        method: 'POST',
        path: client.routes.fail(SIM_SERVER_ID, '8'),
        json: { reason: 'x' },
        context: { route: 'fail' },
      });
      await checkToken(client);
      assert.deepEqual(
        seen.map((s) => s.path.replace(/^.*\/(pull|done|fail|servers)$/, '$1')),
        ['pull', 'done', 'fail', 'servers'],
      );
      for (const request of seen) assert.equal(request.headers['user-agent'], userAgent(), request.path);
    } finally {
      await client.close();
    }
  });
});
