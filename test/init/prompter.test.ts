import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { flagsOnlyPrompter, MissingAnswerError } from '../../src/init/prompter.js';
import { scrubSecrets } from '../../src/scrub.js';

/** porter init without a terminal: every question names its flag, nothing secret is printed. */

function capture() {
  let text = '';
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { out, text: () => text };
}

describe('porter init without a terminal', () => {
  const secret = 'hunter2-game-password';
  const scrub = (line: string) => scrubSecrets(line, [secret]);

  test('a question it cannot ask rejects with exit 78 naming the flag and its environment variable', async () => {
    const prompter = flagsOnlyPrompter(capture().out, scrub);
    for (const ask of [
      () => prompter.text({ message: 'Server id', flag: '--server-id', env: 'PORTER_SERVER_ID' }),
      () => prompter.secret({ message: 'API token', flag: '--token-file', env: 'PORTER_API_TOKEN' }),
      () => prompter.select({ message: 'Which game?', flag: '--game', env: 'PORTER_GAME', choices: [{ value: 1, label: 'one' }] }),
    ]) {
      const error = await ask().catch((e: unknown) => e);
      assert.ok(error instanceof MissingAnswerError);
      assert.equal(error.exitCode, 78);
      assert.match(error.message, /no terminal to ask ".+" on: pass --[a-z-]+ \(or set PORTER_[A-Z_]+\)/);
    }
  });

  test('a yes/no question takes what the flags said', async () => {
    const prompter = flagsOnlyPrompter(capture().out, scrub);
    assert.equal(await prompter.confirm({ message: 'Fix it?', answer: false }), false);
    assert.equal(await prompter.confirm({ message: 'Fix it?', answer: true }), true);
  });

  test('what it says is scrubbed of every secret it holds', () => {
    const { out, text } = capture();
    flagsOnlyPrompter(out, scrub).say('error', `the game server echoed ${secret} back`);
    assert.equal(text(), '✖ the game server echoed [Redacted] back\n');
  });
});
