import { connect, type Socket } from 'node:net';
import { bodyText, encodePacket, PacketDecoder, type RconPacket } from '../../../../src/protocols/rcon/codec.js';

/**
 * A bare-bytes RCON client for looking at exactly what a server sends: no framing rules of its
 * own beyond decoding, so tests can send what a well-behaved client never would.
 */
export class RawRconClient {
  readonly socket: Socket;
  readonly packets: RconPacket[] = [];
  readonly closed: Promise<void>;
  #decoder = new PacketDecoder();
  #waiters: Array<() => void> = [];
  #isClosed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.packets.push(...this.#decoder.push(chunk).packets);
      this.#wake();
    });
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      socket.on('close', () => {
        this.#isClosed = true;
        this.#wake();
        resolve();
      }),
    );
  }

  static async connect(port: number): Promise<RawRconClient> {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new RawRconClient(socket);
  }

  get isClosed(): boolean {
    return this.#isClosed;
  }

  send(id: number, type: number, body: string | Buffer = ''): void {
    this.socket.write(encodePacket(id, type, body));
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Waits until `count` packets have arrived in total (bounded), or the connection closed. */
  async waitForPackets(count: number, timeoutMs = 15_000): Promise<RconPacket[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.packets.length < count && !this.#isClosed) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${count} packets (got ${this.packets.length})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.packets.slice(0, count);
  }

  texts(): string[] {
    return this.packets.map((packet) => bodyText(packet.body));
  }

  close(): void {
    this.socket.destroy();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
