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
export const PACKET_OVERHEAD_BYTES = LENGTH_PREFIX_BYTES + MIN_PACKET_LENGTH;
/** What the Valve spec allows a body to be. Servers that follow it (srcds requests) use this. */
export const SPEC_MAX_BODY_BYTES = 4096;
/**
 * Default bound for packets we receive. Larger than the spec on purpose: Minecraft splits answers
 * every 4,096 UTF-16 units, which is up to 12,288 UTF-8 bytes for non-ASCII text, and CS2 sends
 * single packets over 4,200 bytes. The bound still rejects garbage (an HTTP, TLS or SSH peer
 * reads as a length in the hundreds of megabytes) and caps memory per packet.
 */
export const DEFAULT_MAX_PACKET_LENGTH = 1024 * 1024;

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

/**
 * Streaming decoder: TCP delivers packets split across chunks and several per chunk. After a
 * protocol error the stream cannot be resynchronised, so the decoder stays failed and the caller
 * must drop the connection.
 */
export class PacketDecoder {
  readonly #maxPacketLength: number;
  #buffer: Buffer = Buffer.alloc(0);
  #failed: RconProtocolError | undefined;

  constructor(options: { maxPacketLength?: number } = {}) {
    this.#maxPacketLength = options.maxPacketLength ?? DEFAULT_MAX_PACKET_LENGTH;
  }

  /** Bytes received that do not yet form a whole packet. */
  get pendingBytes(): number {
    return this.#buffer.length;
  }

  /** Feeds a chunk; returns every packet it completes. Throws RconProtocolError on a bad length. */
  push(chunk: Buffer): RconPacket[] {
    if (this.#failed) throw this.#failed;
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const packets: RconPacket[] = [];
    let offset = 0;
    while (this.#buffer.length - offset >= LENGTH_PREFIX_BYTES) {
      const length = this.#buffer.readInt32LE(offset);
      if (length < MIN_PACKET_LENGTH || length > this.#maxPacketLength) {
        this.#failed = new RconProtocolError(
          `received an RCON packet length of ${length} bytes (allowed ${MIN_PACKET_LENGTH}–${this.#maxPacketLength}): ` +
            'the peer does not speak Source RCON; check that host and port point at the game server\'s RCON port',
        );
        this.#buffer = Buffer.alloc(0);
        throw this.#failed;
      }
      const end = offset + LENGTH_PREFIX_BYTES + length;
      if (end > this.#buffer.length) break;
      packets.push({
        id: this.#buffer.readInt32LE(offset + 4),
        type: this.#buffer.readInt32LE(offset + 8),
        // Copy so a body the caller keeps does not pin the whole chunk in memory.
        body: Buffer.from(this.#buffer.subarray(offset + 12, end - 2)),
      });
      offset = end;
    }
    this.#buffer = offset === 0 ? this.#buffer : Buffer.from(this.#buffer.subarray(offset));
    return packets;
  }
}
