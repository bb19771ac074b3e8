import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { writeSimState } from '../../src/demo/sim-state.js';
import { SIM_TOKEN, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { offerRunningSim } from '../../src/init/sim-step.js';
import { flagsOnlyPrompter, type Prompter } from '../../src/init/prompter.js';

/** A person who picks `pick` at every list, recording what init said and asked. */
function person(pick: number): { prompter: Prompter; said: string[]; asked: string[] } {
  const said: string[] = [];
  const asked: string[] = [];
  const refuse = () => Promise.reject(new Error('not asked here'));
  const prompter: Prompter = {
    interactive: true,
    text: refuse,
    secret: refuse,
    select: ({ message, choices }) => {
      asked.push([message, ...choices.map((c) => c.label)].join(' | '));
      return Promise.resolve(choices[pick]!.value);
    },
    confirm: refuse,
    say: (_kind, text) => void said.push(text),
  };
  return { prompter, said, asked };
}

const NO_FLAGS = { yes: false, fixGameSettings: false, force: false, systemd: false };

describe('porter init offers a running porter sim', () => {
  let api: FakeSellerApi;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    api = await startSellerApi();
    dir = mkdtempSync(join(tmpdir(), 'porter-sim-offer-'));
    env = { XDG_RUNTIME_DIR: dir };
  });
  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const live = () =>
    writeSimState(join(dir, 'porter', 'sim.json'), {
      pid: process.pid,
      game: 'minecraft',
      storeUrl: api.url,
      purchasesUrl: `${api.url}/buy`,
      token: SIM_TOKEN,
    });

  test('alive and answering: offered, and its address and token are taken when chosen', async () => {
    live();
    const { prompter, asked } = person(0);
    assert.deepEqual(await offerRunningSim(prompter, NO_FLAGS, env), { baseUrl: api.url, token: SIM_TOKEN });
    assert.equal(asked.length, 1);
    assert.match(
      asked[0]!,
      new RegExp(`porter sim is running here \\(Minecraft, pid ${process.pid}\\).*Use the sim's store at ${api.url}`),
    );
    assert.equal(await offerRunningSim(person(1).prompter, NO_FLAGS, env), undefined, '"Another store"');
  });

  test('from flags, or with an address given, nothing is offered, read or said', async () => {
    live();
    const said: string[] = [];
    const out = { write: (text: string) => said.push(text) } as unknown as NodeJS.WritableStream;
    assert.equal(
      await offerRunningSim(
        flagsOnlyPrompter(out, (t) => t),
        NO_FLAGS,
        env,
      ),
      undefined,
    );
    const { prompter, asked } = person(0);
    assert.equal(await offerRunningSim(prompter, { ...NO_FLAGS, apiUrl: 'https://seller.example.com' }, env), undefined);
    assert.deepEqual([said, asked], [[], []]);
  });

  test('no state file: nothing offered, nothing said', async () => {
    const { prompter, said, asked } = person(0);
    assert.equal(await offerRunningSim(prompter, NO_FLAGS, { XDG_RUNTIME_DIR: join(dir, 'none') }), undefined);
    assert.deepEqual([said, asked], [[], []]);
  });
});
