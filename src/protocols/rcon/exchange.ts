import type { RconFlavour } from './descriptor.js';
import { bodyBytes, encodePacket, PacketType, type RconPacket } from './codec.js';

/**
 * How one request and its answer look on the wire for each server dialect. Pure: the connection
 * writes `initial`, feeds every packet it receives to `accept`, and writes what `accept` asks for.
 */
export type { RconFlavour } from './descriptor.js';

/**
 * The probe Minecraft answers with `Unknown request c8` and the probe's id, after every fragment of
 * the command's answer: Minecraft's split answers carry no end marker of their own.
 */
export const MINECRAFT_PROBE_TYPE = 200;

/** Minecraft sends an answer in pieces of this many characters (RconClient's chunk size). */
const MINECRAFT_SPLIT = 4096;

type Step =
  /** Not part of this exchange (srcds' extra packet after the mirror, a late answer): drop it. */
  | { readonly kind: 'ignore' }
  | { readonly kind: 'more'; readonly write?: Buffer }
  /** `idZero`: the server answered with id 0 instead of the request's id (see planCommand). */
  | { readonly kind: 'done'; readonly idZero?: true }
  /** The answer grew past the cap: stop reading, it will not end well. */
  | { readonly kind: 'overflow' };

interface CommandExchange {
  /** Packets to write now, back to back only where the dialect allows it. */
  readonly initial: readonly Buffer[];
  accept(packet: RconPacket): Step;
  /** Answer packets received so far; any at all proves the command ran. */
  readonly fragments: number;
  /** The fragments joined as bytes, then decoded (a split UTF-8 sequence survives). */
  text(): string;
}

const ignore: Step = { kind: 'ignore' };
const more: Step = { kind: 'more' };
const done: Step = { kind: 'done' };
const overflow: Step = { kind: 'overflow' };

/**
 * Types a packet answering with id 0 may have: RESPONSE_VALUE, and 2, which Conan Exiles uses.
 * Others (Squad's chat broadcasts are type 1) are console traffic, never an answer.
 */
const ID_ZERO_ANSWER_TYPES: ReadonlySet<number> = new Set([PacketType.RESPONSE_VALUE, PacketType.AUTH_RESPONSE]);

class Fragments {
  readonly #parts: Buffer[] = [];
  readonly #maxBytes: number;
  #bytes = 0;
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }
  get count(): number {
    return this.#parts.length;
  }
  /** False, keeping nothing, when the packet would take the answer over the cap. */
  add(packet: RconPacket): boolean {
    const bytes = bodyBytes(packet.body);
    if (this.#bytes + bytes.length > this.#maxBytes) return false;
    this.#bytes += bytes.length;
    this.#parts.push(bytes);
    return true;
  }
  text(): string {
    return Buffer.concat(this.#parts).toString('utf8');
  }
}

interface PlanOptions {
  /** Hands out request ids; the caller keeps them unique on the connection (never 0 or -1). */
  readonly nextId: () => number;
  /** Most answer bytes collected (see MAX_ANSWER_BYTES); past it the exchange overflows. */
  readonly maxAnswerBytes: number;
}

export function planCommand(flavour: RconFlavour, command: string, options: PlanOptions): CommandExchange {
  const { nextId } = options;
  const commandId = nextId();
  const fragments = new Fragments(options.maxAnswerBytes);
  const packet = encodePacket(commandId, PacketType.EXECCOMMAND, command);
  // A getter, not a spread copy: the count must stay live.
  const exchange = (initial: Buffer[], accept: (received: RconPacket) => Step): CommandExchange => ({
    initial,
    accept,
    get fragments() {
      return fragments.count;
    },
    text: () => fragments.text(),
  });

  if (flavour === 'id0') {
    // Palworld-style servers answer every request with id 0, so ids cannot match: with one
    // request in flight, the next packet is the answer.
    return exchange([packet], (received) => (fragments.add(received) ? done : overflow));
  }

  const probeId = nextId();
  // A server that answers with id 0 although its flavour says otherwise (Palworld, Conan Exiles
  // behind a wrong preset): with one request in flight an id-0 answer can only be this one's, and
  // porter never uses id 0. Only before any fragment with our id came: once the server has used
  // our id, an id-0 packet is something else.
  const answersWithIdZero = (received: RconPacket) => received.id === 0 && fragments.count === 0 && ID_ZERO_ANSWER_TYPES.has(received.type);
  const idZeroDone: Step = { kind: 'done', idZero: true };

  if (flavour === 'source') {
    // srcds mirrors an empty RESPONSE_VALUE after the command's answer; the mirror ends the answer.
    // The extra packet srcds sends after the mirror carries the probe id and is ignored later on.
    return exchange([packet, encodePacket(probeId, PacketType.RESPONSE_VALUE, '')], (received) => {
      if (received.id === commandId) return fragments.add(received) ? more : overflow;
      if (answersWithIdZero(received)) return fragments.add(received) ? idZeroDone : overflow;
      return received.id === probeId ? done : ignore;
    });
  }

  // Minecraft: never two packets back to back (its single 1,460-byte read would see both and it
  // closes the connection). Once the first fragment arrives the command was read, so the probe can
  // follow; Minecraft answers it only after the command's last fragment.
  // Minecraft cuts answers into pieces of 4,096 characters, so a first piece under 4,096 bytes
  // (hence under 4,096 characters too) is the whole answer: no probe, one round trip instead of two.
  // Counting bytes keeps this safe on servers that split by bytes instead of characters.
  let probeSent = false;
  return exchange([packet], (received) => {
    if (received.id === commandId) {
      if (!fragments.add(received)) return overflow;
      if (probeSent) return more;
      if (fragments.count === 1 && bodyBytes(received.body).length < MINECRAFT_SPLIT) return done;
      probeSent = true;
      return { kind: 'more', write: encodePacket(probeId, MINECRAFT_PROBE_TYPE, '') };
    }
    if (answersWithIdZero(received)) return fragments.add(received) ? idZeroDone : overflow;
    return probeSent && received.id === probeId ? done : ignore;
  });
}

type AuthStep = 'wait' | 'accepted' | 'rejected';

interface AuthExchange {
  readonly packet: Buffer;
  accept(packet: RconPacket): AuthStep;
}

/**
 * Both auth dialects: Minecraft answers with one AUTH_RESPONSE; srcds first sends an empty
 * RESPONSE_VALUE, which must not be mistaken for the verdict. Only an AUTH_RESPONSE decides, and
 * id -1 means the password was wrong. Any other id is accepted: id-0 servers answer with 0.
 */
export function planAuth(password: string, id: number): AuthExchange {
  return {
    packet: encodePacket(id, PacketType.AUTH, password),
    accept(received) {
      if (received.type !== PacketType.AUTH_RESPONSE) return 'wait';
      return received.id === -1 ? 'rejected' : 'accepted';
    },
  };
}
