import { connect, type Socket } from 'node:net';

/**
 * The least an RCON client can do, for the benchmarks' floors: write a length-prefixed packet,
 * read packets until one matches, with no fragment handling at all (the RCON benchmark's raw
 * client and the fleet's floor).
 */

function encode(id: number, type: number, body: string): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  const packet = Buffer.alloc(14 + bytes.length);
  packet.writeInt32LE(10 + bytes.length, 0);
  packet.writeInt32LE(id, 4);
  packet.writeInt32LE(type, 8);
  bytes.copy(packet, 12);
  return packet;
}

/** One connection: one request at a time, answered by the next packet that matches. */
export class RawRconClient {
  readonly #socket: Socket;
  #buffer: Buffer = Buffer.alloc(0);
  #want: { match: (id: number, type: number) => boolean; resolve: () => void } | undefined;

  constructor(socket: Socket) {
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
      while (this.#buffer.length >= 4) {
        const length = this.#buffer.readInt32LE(0);
        if (this.#buffer.length < 4 + length) break;
        const id = this.#buffer.readInt32LE(4);
        const type = this.#buffer.readInt32LE(8);
        this.#buffer = this.#buffer.subarray(4 + length);
        const want = this.#want;
        if (want?.match(id, type)) {
          this.#want = undefined;
          want.resolve();
        }
      }
    });
  }

  request(id: number, type: number, body: string, match: (id: number, type: number) => boolean): Promise<void> {
    return this.requestAll([{ id, type, body }], match);
  }

  /** Several packets in one write (a command and the probe that marks its answer's end), answered by the first match. */
  requestAll(
    packets: ReadonlyArray<{ id: number; type: number; body: string }>,
    match: (id: number, type: number) => boolean,
  ): Promise<void> {
    return new Promise((resolve) => {
      this.#want = { match, resolve };
      this.#socket.write(
        packets.length === 1
          ? encode(packets[0]!.id, packets[0]!.type, packets[0]!.body)
          : Buffer.concat(packets.map((p) => encode(p.id, p.type, p.body))),
      );
    });
  }

  /** Logs in: only an AUTH_RESPONSE (type 2) decides, since srcds sends an empty RESPONSE_VALUE first. */
  login(password: string): Promise<void> {
    return this.request(1, 3, password, (_id, type) => type === 2);
  }
}

/** A logged-in connection to 127.0.0.1:`port`; a socket error ends the process, naming `who`. */
export async function connectRawRcon(port: number, password: string, who: string): Promise<{ client: RawRconClient; socket: Socket }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', (error) => {
    process.stderr.write(`${who}: RCON: ${error.message}\n`);
    process.exit(1);
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const client = new RawRconClient(socket);
  await client.login(password);
  return { client, socket };
}
