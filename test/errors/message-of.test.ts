import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { ServerRunner } from '../../src/daemon/server-runner.js';
import type { ServerParts } from '../../src/daemon/build-server.js';
import { ConfigError, messageOf } from '../../src/errors.js';
import { FakeClock } from '../helpers/fake-clock.js';

describe('messageOf', () => {
  test("an Error's message, a PorterError's too", () => {
    assert.equal(messageOf(new Error('connect ECONNREFUSED 127.0.0.1:25575')), 'connect ECONNREFUSED 127.0.0.1:25575');
    assert.equal(messageOf(new ConfigError('rcon.port: expected a port')), 'rcon.port: expected a port');
    assert.equal(messageOf(new Error('')), '');
  });

  test('the message of an error-shaped object that is not an Error of this realm', () => {
    assert.equal(messageOf({ name: 'AbortError', message: 'the operation was aborted' }), 'the operation was aborted');
  });

  test('anything else thrown, as text, never undefined', () => {
    assert.equal(messageOf('socket hang up'), 'socket hang up');
    assert.equal(messageOf(42), '42');
    assert.equal(messageOf(undefined), 'undefined');
    assert.equal(messageOf(null), 'null');
    assert.equal(messageOf({ message: 7 }), '[object Object]');
  });

  test('a game server that throws a string on connect: game.unreachable says what it threw', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const executor = {
      // Not an Error, on purpose: what a careless library may reject with.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      connect: () => Promise.reject('the game server closed the socket'),
    };
    const parts = { server: { id: 's1' }, executor } as unknown as ServerParts;
    await new ServerRunner(parts, { logger, clock: new FakeClock() }).connect();
    assert.deepEqual(
      lines.map(({ event, err }) => ({ event, err })),
      [{ event: 'game.unreachable', err: 'the game server closed the socket' }],
    );
  });
});
