import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { decodeClientPacket, encodeAnswer, encodeLoginAnswer, type ClientPacket } from '../../../../src/protocols/battleye/packet.js';

export interface ReceivedCommand {
  readonly seq: number;
  readonly text: string;
}

/**
 * A BattlEye RCon peer that does only what the test says: it accepts the login with `password`
 * (answering keepalives too), records every datagram, and sends whatever bytes the test hands it,
 * hostile ones included. The simulator is for behaving servers; this is for misbehaving ones.
 */
export class RawPeer {
  readonly received: ClientPacket[] = [];
  readonly #socket: Socket;
  readonly #password: string;
  #client: RemoteInfo | undefined;
  answerKeepalives = true;
  /** Datagrams to send back for each (non-empty) command, in order; nothing when unset. */
  onCommand: ((command: ReceivedCommand) => Buffer[]) | undefined;

  private constructor(socket: Socket, password: string) {
    this.#socket = socket;
    this.#password = password;
    socket.on('message', (datagram: Buffer, from: RemoteInfo) => this.#onDatagram(datagram, from));
  }

  static async start(password: string): Promise<RawPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new RawPeer(socket, password);
  }

  get port(): number {
    return this.#socket.address().port;
  }

  /** Commands received, keepalives left out. */
  commands(): ReceivedCommand[] {
    return this.received.flatMap((packet) =>
      packet.kind === 'command' && packet.body.length > 0 ? [{ seq: packet.seq, text: packet.body.toString('utf8') }] : [],
    );
  }

  acks(): number[] {
    return this.received.flatMap((packet) => (packet.kind === 'ack' ? [packet.seq] : []));
  }

  logins(): number {
    return this.received.filter((packet) => packet.kind === 'login').length;
  }

  send(...datagrams: Buffer[]): void {
    const client = this.#client;
    if (!client) throw new Error('no client has logged in to the raw peer');
    for (const datagram of datagrams) this.#socket.send(datagram, client.port, client.address);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }

  #onDatagram(datagram: Buffer, from: RemoteInfo): void {
    const decoded = decodeClientPacket(datagram);
    if ('problem' in decoded) return;
    const packet = decoded.packet;
    this.received.push(packet);
    if (packet.kind === 'login') {
      this.#client = from;
      this.send(encodeLoginAnswer(packet.password.toString('utf8') === this.#password));
    } else if (packet.kind === 'command' && packet.body.length === 0) {
      if (this.answerKeepalives) this.send(encodeAnswer(packet.seq, Buffer.alloc(0)));
    } else if (packet.kind === 'command' && this.onCommand) {
      this.send(...this.onCommand({ seq: packet.seq, text: packet.body.toString('utf8') }));
    }
  }
}
