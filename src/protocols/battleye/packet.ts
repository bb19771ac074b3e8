import { crc32 } from 'node:zlib';

/**
 * BattlEye RCon datagrams (BattlEye's BERConProtocol.txt, v2). Every datagram, either way:
 * `'B' 'E'`, a CRC32 (IEEE, little-endian) of everything after it, `0xFF`, then the payload,
 * whose first byte is the type:
 * - 0x00 login: client `0x00 password`, server `0x00 0x01` (accepted) or `0x00 0x00` (refused);
 * - 0x01 command: client `0x01 seq text`, server `0x01 seq text`, or, when the answer did not fit
 *   one datagram, `0x01 seq 0x00 total index text` in every part (parts may come in any order);
 * - 0x02 server message: server `0x02 seq text`, acknowledged by the client with `0x02 seq`.
 * Sequence numbers are one byte and wrap. An empty command is the keepalive.
 */

const PacketType = { LOGIN: 0x00, COMMAND: 0x01, MESSAGE: 0x02 } as const;

/** 'B', 'E', four CRC bytes, 0xFF. */
const HEADER_BYTES = 7;

/** An IPv4 UDP datagram carries at most 65,507 bytes. */
const MAX_DATAGRAM_BYTES = 65_507;

/** The longest command text one datagram carries: the header, the type and the sequence number go first. */
export const MAX_COMMAND_BYTES = MAX_DATAGRAM_BYTES - HEADER_BYTES - 2;

function frame(payload: Buffer): Buffer {
  const datagram = Buffer.alloc(HEADER_BYTES + payload.length);
  datagram.write('BE', 0, 'latin1');
  datagram[6] = 0xff;
  payload.copy(datagram, HEADER_BYTES);
  datagram.writeUInt32LE(crc32(datagram.subarray(6)), 2);
  return datagram;
}

export function encodeLogin(password: string): Buffer {
  return frame(Buffer.concat([Buffer.of(PacketType.LOGIN), Buffer.from(password, 'utf8')]));
}

export function encodeCommand(seq: number, text: string | Buffer): Buffer {
  const body = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  return frame(Buffer.concat([Buffer.of(PacketType.COMMAND, seq & 0xff), body]));
}

export function encodeAck(seq: number): Buffer {
  return frame(Buffer.of(PacketType.MESSAGE, seq & 0xff));
}

/** What the server sends: the simulator speaks this side. */
export function encodeLoginAnswer(accepted: boolean): Buffer {
  return frame(Buffer.of(PacketType.LOGIN, accepted ? 0x01 : 0x00));
}

/** One part of an answer; `total` undefined: the whole answer in one datagram, without the part header. */
export function encodeAnswer(seq: number, body: Buffer, part?: { total: number; index: number }): Buffer {
  const head =
    part === undefined
      ? Buffer.of(PacketType.COMMAND, seq & 0xff)
      : Buffer.of(PacketType.COMMAND, seq & 0xff, 0x00, part.total, part.index);
  return frame(Buffer.concat([head, body]));
}

export function encodeMessage(seq: number, text: string): Buffer {
  return frame(Buffer.concat([Buffer.of(PacketType.MESSAGE, seq & 0xff), Buffer.from(text, 'utf8')]));
}

export type ServerPacket =
  | { readonly kind: 'login'; readonly accepted: boolean }
  /** `total` 1 and `index` 0 for an answer in one datagram. */
  | { readonly kind: 'answer'; readonly seq: number; readonly total: number; readonly index: number; readonly body: Buffer }
  | { readonly kind: 'message'; readonly seq: number; readonly body: Buffer };

export type ClientPacket =
  | { readonly kind: 'login'; readonly password: Buffer }
  | { readonly kind: 'command'; readonly seq: number; readonly body: Buffer }
  | { readonly kind: 'ack'; readonly seq: number };

/** Why a datagram was dropped. */
type DecodeProblem = 'short' | 'header' | 'checksum' | 'type' | 'malformed';

type Decoded<T> = { readonly packet: T } | { readonly problem: DecodeProblem };

/** The header and checksum, then the payload; a problem when the datagram is not BattlEye RCon at all. */
function payloadOf(datagram: Buffer): Buffer | DecodeProblem {
  if (datagram.length < HEADER_BYTES + 1) return 'short';
  if (datagram[0] !== 0x42 || datagram[1] !== 0x45 || datagram[6] !== 0xff) return 'header';
  if (crc32(datagram.subarray(6)) !== datagram.readUInt32LE(2)) return 'checksum';
  return datagram.subarray(HEADER_BYTES);
}

/** A datagram from the server, or why it cannot be one. Never throws. */
export function decodeServerPacket(datagram: Buffer): Decoded<ServerPacket> {
  const payload = payloadOf(datagram);
  if (typeof payload === 'string') return { problem: payload };
  switch (payload[0]) {
    case PacketType.LOGIN:
      if (payload.length !== 2 || (payload[1] !== 0 && payload[1] !== 1)) return { problem: 'malformed' };
      return { packet: { kind: 'login', accepted: payload[1] === 1 } };
    case PacketType.COMMAND: {
      if (payload.length < 2) return { problem: 'malformed' };
      const seq = payload[1]!;
      const rest = payload.subarray(2);
      // Answer text is never NUL, so a leading 0x00 can only be the part header.
      if (rest.length === 0 || rest[0] !== 0x00) return { packet: { kind: 'answer', seq, total: 1, index: 0, body: rest } };
      if (rest.length < 3) return { problem: 'malformed' };
      const total = rest[1]!;
      const index = rest[2]!;
      if (total === 0 || index >= total) return { problem: 'malformed' };
      return { packet: { kind: 'answer', seq, total, index, body: rest.subarray(3) } };
    }
    case PacketType.MESSAGE:
      if (payload.length < 2) return { problem: 'malformed' };
      return { packet: { kind: 'message', seq: payload[1]!, body: payload.subarray(2) } };
    default:
      return { problem: 'type' };
  }
}

/** A datagram from a client (the simulator's side), or why it cannot be one. Never throws. */
export function decodeClientPacket(datagram: Buffer): Decoded<ClientPacket> {
  const payload = payloadOf(datagram);
  if (typeof payload === 'string') return { problem: payload };
  switch (payload[0]) {
    case PacketType.LOGIN:
      return { packet: { kind: 'login', password: payload.subarray(1) } };
    case PacketType.COMMAND:
      if (payload.length < 2) return { problem: 'malformed' };
      return { packet: { kind: 'command', seq: payload[1]!, body: payload.subarray(2) } };
    case PacketType.MESSAGE:
      if (payload.length !== 2) return { problem: 'malformed' };
      return { packet: { kind: 'ack', seq: payload[1]! } };
    default:
      return { problem: 'type' };
  }
}
