import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pino } from 'pino';
import { BattlEyeExecutor } from '../../../src/protocols/battleye/executor.js';
import { encodeAnswer, encodeLoginAnswer, encodeMessage } from '../../../src/protocols/battleye/packet.js';
import { fcOptions } from '../../helpers/fc-options.js';
import { waitFor } from '../../helpers/wait-for.js';
import { RawPeer, type ReceivedCommand } from './helpers/raw-peer.js';

/**
 * A BattlEye "server" that sends what the test wants, over real UDP on 127.0.0.1: junk, bad
 * checksums, answers for nobody, parts that contradict each other, repeated messages, floods. The
 * executor drops or ignores each (counting it), answers the command with exactly its own parts,
 * acknowledges every message, and never crashes.
 */

const PASSWORD = 'hostile-pw';
const context = { id: '1', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };

let peer: RawPeer;
let porter: BattlEyeExecutor;

before(async () => {
  peer = await RawPeer.start(PASSWORD);
  porter = new BattlEyeExecutor(
    { type: 'battleye', host: '127.0.0.1', port: peer.port, password: PASSWORD, timeoutMs: 10_000, connectTimeoutMs: 3000 },
    { logger: pino({ level: 'silent' }) },
  );
  await porter.connect();
});

after(async () => {
  await porter.close();
  await peer.close();
});

/** Sends a command and waits until the peer has it. */
async function sent(command: string): Promise<{ answer: Promise<string>; received: ReceivedCommand }> {
  const before = peer.commands().length;
  const answer = porter.execute(command, context);
  const received = await waitFor(() => peer.commands()[before], { what: `the peer to receive ${command}` });
  return { answer, received };
}

function split(seq: number, text: string, size: number): Buffer[] {
  const body = Buffer.from(text, 'utf8');
  const total = Math.ceil(body.length / size);
  return Array.from({ length: total }, (_, index) => encodeAnswer(seq, body.subarray(index * size, (index + 1) * size), { total, index }));
}

describe('BattlEyeExecutor against a hostile BattlEye server', () => {
  test('junk, bad checksums and unknown types are dropped and counted; the real answer still completes', async () => {
    const dropped = porter.traffic().dropped;
    const { answer, received } = await sent('#give Survivor Apple');
    const good = encodeAnswer(received.seq, Buffer.from('done'));
    const badCrc = Buffer.from(good);
    badCrc[2]! ^= 0xff;
    const badType = Buffer.from(good);
    badType[7] = 0x09;
    peer.send(Buffer.from('not battleye at all'), Buffer.alloc(0), badCrc, badType, Buffer.from('BE'), good);
    assert.equal(await answer, 'done');
    await waitFor(() => porter.traffic().dropped - dropped === 5, { what: 'five dropped datagrams' });
  });

  test('answers for no command in flight, a second login answer, and contradicting parts are ignored', async () => {
    const ignored = porter.traffic().ignoredAnswers;
    const { answer, received } = await sent('players');
    const seq = received.seq;
    peer.send(
      encodeAnswer((seq + 1) & 0xff, Buffer.from('someone else')),
      encodeLoginAnswer(true),
      encodeAnswer(seq, Buffer.from('first '), { total: 2, index: 0 }),
      encodeAnswer(seq, Buffer.from('FORGED'), { total: 2, index: 0 }),
      encodeAnswer(seq, Buffer.from('FORGED'), { total: 3, index: 2 }),
      encodeAnswer(seq, Buffer.from('second'), { total: 2, index: 1 }),
    );
    assert.equal(await answer, 'first second');
    await waitFor(() => porter.traffic().ignoredAnswers - ignored === 4, { what: 'four ignored answers' });
  });

  test('every server message is acknowledged, repeats too, and a repeat is known as one', async () => {
    const acked = peer.acks().length;
    const { messages, repeatedMessages } = porter.traffic();
    peer.send(
      encodeMessage(17, 'Player #0 Survivor disconnected'),
      encodeMessage(17, 'Player #0 Survivor disconnected'),
      encodeMessage(18, 'x'),
    );
    await waitFor(() => peer.acks().length - acked === 3, { what: 'three acks' });
    assert.deepEqual(peer.acks().slice(acked), [17, 17, 18]);
    assert.equal(porter.traffic().messages - messages, 3);
    assert.equal(porter.traffic().repeatedMessages - repeatedMessages, 1);
  });

  test('a flood of messages while a command waits: all acknowledged, the command answered', async () => {
    const acked = peer.acks().length;
    const { answer, received } = await sent('say -1 during the flood');
    // In batches: a burst beyond the socket's receive buffer would be lost on the way, as UDP may, and
    // the raw peer does not send again. Linux's default buffer (212,992 bytes) holds about 256 small
    // datagrams, fewer on kernels with a bigger per-datagram overhead: 100 leave room to spare.
    for (let batch = 0; batch < 30; batch += 1) {
      for (let i = 0; i < 100; i += 1) peer.send(encodeMessage((batch * 100 + i) & 0xff, `(Side) Flooder: ${batch}-${i}`));
      if (batch === 15) peer.send(encodeAnswer(received.seq, Buffer.alloc(0)));
      await waitFor(() => peer.acks().length - acked === (batch + 1) * 100, { what: `the acks of batch ${batch}` });
    }
    assert.equal(await answer, '');
  });

  test('property: the answer is exactly its parts, split and shuffled, among repeats, forgeries with bad checksums and others’ answers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 300 }).filter((text) => !text.includes('\0')),
        fc.integer({ min: 1, max: 64 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.integer({ min: 0, max: 1000 }),
        async (text, size, noise, shuffleSeed) => {
          const { answer, received } = await sent(`porter-test ${shuffleSeed}`);
          const seq = received.seq;
          const parts = Buffer.byteLength(text) <= size ? [encodeAnswer(seq, Buffer.from(text, 'utf8'))] : split(seq, text, size);
          const datagrams = [...parts];
          for (const pick of noise) {
            const copy = Buffer.from(parts[pick % parts.length]!);
            if (pick % 3 === 0) datagrams.push(copy);
            else if (pick % 3 === 1) {
              copy[copy.length - 1]! ^= 0x40;
              datagrams.push(copy);
            } else datagrams.push(encodeAnswer((seq + 1 + (pick % 200)) & 0xff, Buffer.from('not yours')));
          }
          const shuffled = datagrams
            .map((datagram, index) => ({ datagram, key: (index * 2654435761 + shuffleSeed) % 4093 }))
            .sort((a, b) => a.key - b.key)
            .map((entry) => entry.datagram);
          peer.send(...shuffled);
          assert.equal(await answer, text);
        },
      ),
      fcOptions({ numRuns: 40 }),
    );
  });
});
