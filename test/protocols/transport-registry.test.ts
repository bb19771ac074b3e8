import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { z } from 'zod';
import { systemClock } from '../../src/clock.js';
import { resolveServer } from '../../src/config/resolve-server.js';
import { serverSchema } from '../../src/config/schema.js';
import { GAMES } from '../../src/games/registry.js';
import { TRANSPORTS } from '../../src/protocols/transport-registry.js';
import { createExecutor } from '../../src/protocols/executor-registry.js';

const logger = pino({ level: 'silent' });
/** A game of the registry, seen through what these tests read of it. */
type GameEntry = { readonly docsTitle: string; readonly console?: { readonly transport: string } };

const SERVER_ID = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';

type Transport = (typeof TRANSPORTS)[number];

/**
 * The smallest `executor` section a transport accepts: its type, and each key its schema requires
 * (a script's program), read from the schema so a new transport needs no line here.
 */
function minimalSection(transport: Transport): Record<string, unknown> {
  const schema = z.toJSONSchema(transport.schema, { io: 'input' }) as {
    required?: string[];
    properties: Record<string, { type?: string }>;
  };
  const section: Record<string, unknown> = { type: transport.type };
  for (const key of schema.required ?? []) {
    if (key !== 'type') section[key] = schema.properties[key]?.type === 'array' ? ['/bin/true'] : '/bin/true';
  }
  return section;
}

describe('transport descriptors', () => {
  test('each descriptor names its schema by its own type, once', () => {
    const types = TRANSPORTS.map((transport) => transport.type);
    assert.equal(new Set(types).size, types.length, 'a transport listed twice');
    for (const transport of TRANSPORTS) {
      assert.equal(transport.schema.parse(minimalSection(transport)).type, transport.type);
      assert.equal(transport.schema.safeParse({ ...minimalSection(transport), type: 'not-a-transport' }).success, false);
    }
  });

  test("a transport's default game reaches its console through that transport; one without a console defaults to no game", () => {
    for (const transport of TRANSPORTS) {
      const game: GameEntry = GAMES[transport.defaultPreset];
      if ('console' in transport) assert.equal(game.console?.transport, transport.type, `${transport.type}: ${transport.defaultPreset}`);
      else assert.equal(game.console, undefined, `${transport.type}: ${transport.defaultPreset}`);
    }
  });

  test('every transport with a console is offered by porter init for some game', () => {
    const offered = new Set(Object.values(GAMES).map((game: GameEntry) => game.console?.transport));
    for (const transport of TRANSPORTS) {
      if ('console' in transport) assert.ok(offered.has(transport.type), `no game of the registry uses ${transport.type}`);
    }
  });

  test('every transport resolves from a config section and builds its executor, without connecting', async () => {
    for (const transport of TRANSPORTS) {
      const server = serverSchema.parse({ id: SERVER_ID, executor: minimalSection(transport) });
      const resolved = resolveServer(server, '/etc/porter', 'secret-password-1');
      assert.equal(resolved.executor.type, transport.type);
      assert.equal(resolved.players.preset, transport.defaultPreset);
      assert.equal('passwordFile' in resolved.executor, false, `${transport.type}: the file key is gone once resolved`);
      if ('secret' in transport) assert.equal((resolved.executor as { password?: string }).password, 'secret-password-1');
      else assert.equal('password' in resolved.executor, false);
      const executor = await createExecutor(resolved.executor, { logger, clock: systemClock });
      assert.equal(executor.isReady(), !('console' in transport), `${transport.type}: only a script is ready before it connects`);
      await executor.close();
    }
  });
});
