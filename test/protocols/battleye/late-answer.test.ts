import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { BattlEyeExecutor } from '../../../src/protocols/battleye/executor.js';
import { encodeAnswer } from '../../../src/protocols/battleye/packet.js';
import { OutcomeUnknownError } from '../../../src/errors.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { waitFor } from '../../helpers/wait-for.js';
import { RawPeer } from './helpers/raw-peer.js';

/**
 * A session kept after a missing answer (see BattlEyeConnection) must never take the late answer
 * of the unanswered command for another command's answer, though sequence numbers are one byte and
 * wrap. A raw peer answers exactly what the test says, and sends the late answer whenever porter
 * would reuse the lost command's number; porter's clock is fake, so the deadlines pass on cue.
 */

const PASSWORD = 'late-answer-pw';
const context = { id: '7', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

async function withPeer(body: (peer: RawPeer, porter: BattlEyeExecutor, clock: FakeClock) => Promise<void>): Promise<void> {
  const clock = new FakeClock();
  const peer = await RawPeer.start(PASSWORD);
  const porter = new BattlEyeExecutor(
    { type: 'battleye', host: '127.0.0.1', port: peer.port, password: PASSWORD, timeoutMs: 2000, connectTimeoutMs: 60_000 },
    { logger: pino({ level: 'silent' }), clock, backoff: { initialMs: 20, maxMs: 100 } },
  );
  try {
    await porter.connect();
    await body(peer, porter, clock);
  } finally {
    await porter.close();
    await peer.close();
  }
}

function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => assert.fail('expected a rejection'),
    (error: unknown) => error as Error,
  );
}

/** Sequence numbers of the commands (empty ones included) the peer received from index `from` on. */
function seqsSince(peer: RawPeer, from: number): number[] {
  return peer.received.slice(from).flatMap((packet) => (packet.kind === 'command' ? [packet.seq] : []));
}

/** Sends a delivery the peer leaves unanswered and lets its deadline pass; resolves with its sequence number. */
async function lose(peer: RawPeer, porter: BattlEyeExecutor, clock: FakeClock, command: string): Promise<number> {
  const outcome = porter.execute(command, context);
  const received = await waitFor(() => peer.commands().find((entry) => entry.text === command), { what: `the peer to receive ${command}` });
  clock.advance(2000);
  const error = await rejection(outcome);
  assert.ok(error instanceof OutcomeUnknownError, String(error));
  return received.seq;
}

describe('BattlEye: a late answer on a session kept after a missing answer', () => {
  test('the unanswered command’s sequence number is retired: its late answer is ignored, never taken for a later command’s, across a wrap of the counter', async () => {
    await withPeer(async (peer, porter, clock) => {
      let lost: number | undefined;
      peer.onCommand = (command) => {
        if (command.text.startsWith('#give')) return [];
        const answer = encodeAnswer(command.seq, Buffer.from(`ran ${command.text}`));
        // Were the lost command's number used again, its late answer would come first.
        return command.seq === lost ? [encodeAnswer(command.seq, Buffer.from('late answer to the #give')), answer] : [answer];
      };
      lost = await lose(peer, porter, clock, '#give Survivor M4');
      peer.send(encodeAnswer(lost, Buffer.from('late answer to the #give')));
      await waitFor(() => porter.traffic().lateAnswers === 1, { what: 'the late answer to be recognised' });

      const from = peer.received.length;
      for (let n = 0; n < 300; n += 1) assert.equal(await porter.query(`echo ${n}`), `ran echo ${n}`, `command ${n}`);
      const used = seqsSince(peer, from);
      assert.ok(used.length >= 300);
      assert.ok(!used.includes(lost), `sequence number ${lost} was used again within two minutes`);
      assert.equal(peer.logins(), 1, 'the session was kept');
      assert.equal(porter.traffic().lateAnswers, 1);

      // Two minutes on, the number is free again: nothing is retired for good.
      const retired = lost;
      lost = undefined;
      clock.advance(120_000);
      const later = peer.received.length;
      for (let n = 0; n < 300; n += 1) assert.equal(await porter.query(`echo again ${n}`), `ran echo again ${n}`);
      assert.ok(seqsSince(peer, later).includes(retired));
      assert.equal(peer.logins(), 1);
    });
  });

  test('more than 16 unanswered requests within two minutes: the session is replaced rather than running out of numbers', async () => {
    await withPeer(async (peer, porter, clock) => {
      peer.onCommand = (command) => (command.text.startsWith('#give') ? [] : [encodeAnswer(command.seq, Buffer.from('ok'))]);
      for (let n = 1; n <= 16; n += 1) await lose(peer, porter, clock, `#give Survivor Apple ${n}`);
      assert.equal(porter.traffic().rechecks, 16, 'each answered by the peer');
      assert.equal(await porter.query('players'), 'ok');
      assert.equal(peer.logins(), 1);
      await lose(peer, porter, clock, '#give Survivor Apple 17');
      await waitFor(() => peer.logins() === 2 && porter.isReady(), { what: 'a new login' });
      assert.equal(await porter.query('players'), 'ok');
      assert.equal(peer.commands().filter((entry) => entry.text.startsWith('#give')).length, 17, 'nothing sent twice');
    });
  });
});
