import { createServer as createHttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { WebSocketServer } from 'ws';
import { encodePacket, PacketDecoder, PacketType } from '../../src/protocols/rcon/codec.js';
import { ANSWER_DELAY, ANSWERED, RECEIVED, type ThawPeerData } from './thaw.js';

/**
 * The peer of test/helpers/thaw.ts, in a worker thread: it keeps answering while the test's
 * thread is blocked. It counts what it read and what it answered in shared memory, which the
 * blocked thread can read without a turn of its event loop. Loaded anywhere else (the test
 * runner loads every file under dist/test/), it does nothing.
 */

if (!isMainThread) startPeer(workerData as ThawPeerData);

function startPeer({ kind, counters: shared }: ThawPeerData): void {
  const counters = new Int32Array(shared);

  const received = () => Atomics.add(counters, RECEIVED, 1);
  /**
   * Runs `write` after the answer delay of the moment; counts the answer once the socket took it
   * (or failed to: the client gave up), so that every request read is counted answered in the end.
   */
  const answerLater = (write: (done: () => void) => void) =>
    setTimeout(
      () => {
        let counted = false;
        write(() => {
          if (counted) return;
          counted = true;
          Atomics.add(counters, ANSWERED, 1);
          Atomics.notify(counters, ANSWERED);
        });
      },
      Atomics.load(counters, ANSWER_DELAY),
    );

  function listen(server: Server | ReturnType<typeof createHttpServer>): void {
    server.listen(0, '127.0.0.1', () => parentPort!.postMessage((server.address() as AddressInfo).port));
  }

  if (kind === 'raw') {
    listen(
      createNetServer((socket) => {
        socket.on('error', () => undefined);
        socket.on('data', () => {
          received();
          answerLater((done) => socket.write('answer', done));
        });
      }),
    );
  } else if (kind === 'http') {
    listen(
      createHttpServer((request, response) => {
        request.resume();
        request.on('end', () => {
          received();
          const body = '{"id":7,"command":"say thawed"}';
          answerLater((done) => {
            // A client that gave up during the delay has closed already, before these listeners:
            // its answer can never finish, and the test would wait for it in vain (seen under load).
            if (response.destroyed || response.socket === null || response.socket.destroyed) {
              done();
              return;
            }
            response.once('finish', done).once('close', done);
            response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
            response.end(body);
          });
        });
      }),
    );
  } else if (kind === 'rcon') {
    // Minecraft's dialect: a login, then one answer packet per command, with the command's id.
    listen(
      createNetServer((socket) => {
        socket.on('error', () => undefined);
        const decoder = new PacketDecoder();
        socket.on('data', (chunk: Buffer) => {
          for (const packet of decoder.push(chunk).packets) {
            if (packet.type === PacketType.AUTH) {
              socket.write(encodePacket(packet.id, PacketType.AUTH_RESPONSE, ''));
              continue;
            }
            received();
            answerLater((done) => socket.write(encodePacket(packet.id, PacketType.RESPONSE_VALUE, 'Gave 1 [Diamond] to Steve'), done));
          }
        });
      }),
    );
  } else {
    // Rust's WebRCON: every message answered with its Identifier (the command and the probe after it).
    const http = createHttpServer((_request, response) => response.writeHead(404).end());
    const wss = new WebSocketServer({ server: http });
    wss.on('connection', (ws) => {
      ws.on('error', () => undefined);
      ws.on('message', (data: Buffer) => {
        received();
        const { Identifier } = JSON.parse(data.toString('utf8')) as { Identifier: number };
        const answer = JSON.stringify({ Message: `answer ${Identifier}`, Identifier, Type: 'Generic', Stacktrace: '' });
        answerLater((done) => ws.send(answer, done));
      });
    });
    listen(http);
  }
}
