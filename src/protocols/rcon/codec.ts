import { RconProtocolError } from './errors.js';

/**
 * Source RCON framing: int32 LE length (of everything after it), int32 LE id, int32 LE type,
 * body, two NULs. https://developer.valvesoftware.com/wiki/Source_RCON_Protocol
 */
export const PacketType = {
  RESPONSE_VALUE: 0,
  EXECCOMMAND: 2,
  AUTH_RESPONSE: 2,
  AUTH: 3,
} as const;

/** id + type + the two closing NULs: the smallest legal length field. */
export const MIN_PACKET_LENGTH = 10;
/** The length field does not count itself. */
export const LENGTH_PREFIX_BYTES = 4;
/** Bytes a packet adds around its body: length, id, type, two NULs. */
const PACKET_OVERHEAD_BYTES = LENGTH_PREFIX_BYTES + MIN_PACKET_LENGTH;
/** What the Valve spec allows a body to be. Servers that follow it (srcds requests) use this. */
export const SPEC_MAX_BODY_BYTES = 4096;
/**
 * Default bound for packets we receive. Larger than the spec on purpose: Minecraft splits answers
 * every 4,096 UTF-16 units, which is up to 12,288 UTF-8 bytes for non-ASCII text, and CS2 sends
 * single packets over 4,200 bytes. The bound still rejects garbage (an HTTP, TLS or SSH peer
 * reads as a length in the hundreds of megabytes) and caps memory per packet.
 */
const DEFAULT_MAX_PACKET_LENGTH = 1024 * 1024;

export interface RconPacket {
  readonly id: number;
  readonly type: number;
  /** Raw body bytes without the two closing NULs (may itself contain NULs: srcds' extra packet). */
  readonly body: Buffer;
}

export function encodePacket(id: number, type: number, body: string | Buffer = ''): Buffer {
  const bodyBytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const packet = Buffer.alloc(PACKET_OVERHEAD_BYTES + bodyBytes.length);
  packet.writeInt32LE(MIN_PACKET_LENGTH + bodyBytes.length, 0);
  packet.writeInt32LE(id, 4);
  packet.writeInt32LE(type, 8);
  bodyBytes.copy(packet, 12);
  // The two closing NULs are already there: Buffer.alloc zero-fills.
  return packet;
}

/** The body as a C string (up to the first NUL), like Minecraft and srcds read it. */
export function bodyText(body: Buffer): string {
  const end = body.indexOf(0);
  return (end === -1 ? body : body.subarray(0, end)).toString('utf8');
}

/** Body bytes up to the first NUL: fragments are joined as bytes so a split UTF-8 sequence survives. */
export function bodyBytes(body: Buffer): Buffer {
  const end = body.indexOf(0);
  return end === -1 ? body : body.subarray(0, end);
}

interface Decoded {
  /** Every whole packet the chunk completed, in order (also those before a bad length). */
  readonly packets: RconPacket[];
  /** Set once the stream turned out not to be Source RCON; the connection must be dropped. */
  readonly error?: RconProtocolError;
}

/**
 * Streaming decoder: TCP delivers packets split across chunks and several per chunk. A length
 * field outside the bounds fails the stream as soon as its 4 bytes are in, before anything is
 * allocated for it; a valid one gets a buffer of exactly that size, which the following chunks are
 * copied into. So the decoder never holds more than one packet (at most maxPacketLength bytes) and
 * copies each byte once, however finely the peer chunks its stream. After a protocol error the
 * stream cannot be resynchronised: the decoder stays failed and the caller must drop the connection.
 */
export class PacketDecoder {
  readonly #maxPacketLength: number;
  /** The first bytes of a length field split across chunks (fewer than 4). */
  #head: Buffer = Buffer.alloc(0);
  /** The packet being filled (id, type, body, NULs: `length` bytes), once its length is known. */
  #packet: Buffer | undefined;
  #filled = 0;
  #failed: RconProtocolError | undefined;

  constructor(options: { maxPacketLength?: number } = {}) {
    this.#maxPacketLength = options.maxPacketLength ?? DEFAULT_MAX_PACKET_LENGTH;
  }

  /** Bytes received that do not yet form a whole packet. */
  get pendingBytes(): number {
    return this.#head.length + (this.#packet ? LENGTH_PREFIX_BYTES + this.#filled : 0);
  }

  /** Feeds a chunk. Never throws: a bad stream comes back as `error`, now and on every later push. */
  push(chunk: Buffer): Decoded {
    if (this.#failed) return { packets: [], error: this.#failed };
    const packets: RconPacket[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      if (!this.#packet) {
        const missing = LENGTH_PREFIX_BYTES - this.#head.length;
        if (chunk.length - offset < missing) {
          this.#head = Buffer.concat([this.#head, chunk.subarray(offset)]);
          break;
        }
        const field = this.#head.length === 0 ? chunk : Buffer.concat([this.#head, chunk.subarray(offset, offset + missing)]);
        const length = field.readInt32LE(this.#head.length === 0 ? offset : 0);
        offset += missing;
        this.#head = Buffer.alloc(0);
        if (length < MIN_PACKET_LENGTH || length > this.#maxPacketLength) {
          this.#failed = new RconProtocolError(
            `received an RCON packet length of ${length} bytes (allowed ${MIN_PACKET_LENGTH}–${this.#maxPacketLength}): ` +
              "the peer does not speak Source RCON; check that host and port point at the game server's RCON port",
          );
          return { packets, error: this.#failed };
        }
        if (chunk.length - offset >= length) {
          // The whole packet is in this chunk: the body is copied out so it does not pin the chunk.
          packets.push(packetOf(chunk.subarray(offset, offset + length), true));
          offset += length;
          continue;
        }
        this.#packet = Buffer.allocUnsafe(length);
        this.#filled = 0;
      }
      const copied = chunk.copy(this.#packet, this.#filled, offset, Math.min(chunk.length, offset + this.#packet.length - this.#filled));
      this.#filled += copied;
      offset += copied;
      if (this.#filled === this.#packet.length) {
        packets.push(packetOf(this.#packet, false));
        this.#packet = undefined;
      }
    }
    return { packets };
  }
}

/** `bytes`: one packet after its length field. */
function packetOf(bytes: Buffer, copyBody: boolean): RconPacket {
  const body = bytes.subarray(8, bytes.length - 2);
  return { id: bytes.readInt32LE(0), type: bytes.readInt32LE(4), body: copyBody ? Buffer.from(body) : body };
}
