import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { proveLogin } from '../../src/init/prove.js';
import { startRconServer, type FakeRconServer } from '../../src/sim/rcon-server.js';
import { SIM_SERVER_ID } from '../../src/sim/seller-api.js';

const games: FakeRconServer[] = [];
after(() => Promise.all(games.map((g) => g.close())));

function configFor(port: number, preset: string): unknown {
  return {
    api: { baseUrl: 'http://127.0.0.1:9/', token: 'gci_prove-test' },
    servers: [
      { id: SIM_SERVER_ID, executor: { type: 'rcon', host: '127.0.0.1', port, password: 'not-the-password' }, players: { preset } },
    ],
  };
}

describe("init's login proof", () => {
  for (const [preset, where, flavour] of [
    ['palworld', /Palworld: AdminPassword in PalWorldSettings\.ini/, 'id0'],
    ['minecraft', /Minecraft: rcon\.password in server\.properties/, 'minecraft'],
  ] as const) {
    test(`a password ${preset} rejects names where ${preset} keeps it`, async () => {
      const game = await startRconServer({ password: 'the-real-password', flavour });
      games.push(game);
      const proof = await proveLogin(configFor(game.port, preset), process.cwd());
      assert.equal(proof.kind, 'refused');
      assert.match(proof.kind === 'refused' ? proof.message : '', where);
      assert.doesNotMatch(proof.kind === 'refused' ? proof.message : '', /not-the-password/, 'the password is not echoed');
    });
  }
});
