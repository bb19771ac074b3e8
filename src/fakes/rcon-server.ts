import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { bodyText, encodePacket, PacketDecoder, PacketType, SPEC_MAX_BODY_BYTES, type RconPacket } from '../protocols/rcon/codec.js';
import type { RconFlavour } from '../protocols/rcon/exchange.js';
import { isQueryCommand, runSimCommand, type SimAnswer } from './rcon-answers.js';
import { runMinecraftCommand, type MinecraftWorld } from './rcon-minecraft-commands.js';
import { runPalworldCommand, runSourceCommand } from './rcon-other-commands.js';
import { SimPlayers } from './rcon-players.js';
import { runZomboidCommand } from './rcon-zomboid-commands.js';
import { SimListener, type SimPlace } from './sim-listener.js';

/**
 * A fake RCON game server on 127.0.0.1 for `porter demo` and the tests. Minecraft flavour copies
 * vanilla's RconClient thread (net.minecraft.server.rcon.thread.RconClient): one blocking read of
 * up to 1,460 bytes per packet and the connection closed when that read is not exactly one
 * packet; answers split every 4,096 characters, each fragment its own packet with the request id
 * and no end marker; `Unknown request <hex>` for unknown types; id -1 for a wrong password and for
 * commands before login. Source flavour copies srcds: an empty RESPONSE_VALUE before the
 * AUTH_RESPONSE, an empty RESPONSE_VALUE request mirrored and followed by an extra packet.
 * id0 flavour copies Palworld: every answer carries id 0.
 */

export interface RconServerOptions extends SimPlace {
  readonly password: string;
  readonly flavour?: RconFlavour;
  /**
   * A game whose console differs from its dialect's usual one. `zomboid`: Project Zomboid, which
   * speaks the Source dialect (flavour "source") but has its own commands, never splits an answer,
   * and answers an empty RESPONSE_VALUE with two identical empty packets instead of srcds' pair.
   */
  readonly game?: 'zomboid';
  /** Players online at start. */
  readonly players?: readonly string[];
  readonly maxPlayers?: number;
}

export interface ExecutedCommand {
  readonly command: string;
  readonly at: number;
  /** A read-only listing (`list`, `status`, `ShowPlayers`…): skip it when counting deliveries. */
  readonly query: boolean;
  /** Which TCP connection (1, 2, …) it came in on. */
  readonly connection: number;
  /** When its answer was handed to the socket; undefined until then, and for good when none was sent. */
  answeredAt?: number;
}

/**
 * Faults for the next command that is not a query:
 * - hang: runs it, never answers and reads nothing more on that connection (a stuck server);
 * - close-before-answer: runs it, then drops the connection without answering;
 * - close-after-answer: runs it, answers, then closes the connection;
 * - close-without-running: drops the connection on receipt; the command does not run.
 * - flood: runs it, then sends answer fragments for it without end (never answering a probe,
 *   reading nothing more) until the client drops the connection: a broken or hostile server.
 *   Fragments carry the request id (id 0 in the id0 flavour) and are written as fast as the
 *   client reads them, never faster, so the flood costs the sim no memory.
 */
export type RconFault = 'hang' | 'close-before-answer' | 'close-after-answer' | 'close-without-running' | 'flood';

interface HandlerContext {
  readonly flavour: RconFlavour;
  readonly online: readonly string[];
}

/** Overrides the answer to a command; return undefined to fall back to the built-in game semantics. */
export type RconCommandHandler = (command: string, context: HandlerContext) => string | SimAnswer | undefined;

export interface FakeRconServer {
  readonly host: string;
  readonly port: number;
  readonly flavour: RconFlavour;
  /** Every command the server ran, in order (queries flagged). */
  readonly executed: ExecutedCommand[];
  /** Connections open now. */
  readonly connections: number;
  /** Connections accepted since start. */
  readonly totalConnections: number;
  /** Logins refused because of a wrong password. */
  readonly authFailures: number;
  /** Connections the server closed because a read was not exactly one packet (Minecraft). */
  readonly framingViolations: number;
  /** Most commands ever received on one connection before the previous one was answered. */
  readonly maxInFlight: number;
  /** Answer bytes (packets included) written by `flood` faults, all connections together. */
  readonly floodedBytes: number;
  online(): string[];
  setOnline(names: readonly string[]): void;
  join(name: string): void;
  leave(name: string): void;
  failNext(kind: RconFault): void;
  setHandler(handler: RconCommandHandler | undefined): void;
  setPassword(password: string): void;
  /** Answers each login only after `ms` (0: at once): a game server busy loading, or a host under load. */
  setLoginDelay(ms: number): void;
  /** Answers every command (player listings too) only after `ms` more (0: as usual): a lagging server. */
  setAnswerDelay(ms: number): void;
  /** Stops listening and drops every connection, keeping state: the game server is down. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** A game server restart: down() then up(). */
  restart(): Promise<void>;
  close(): Promise<void>;
  stop(): Promise<void>;
}

/** Minecraft's read buffer in RconClient: one read per packet, at most this many bytes. */
const MINECRAFT_READ_BYTES = 1460;
/** Minecraft splits answers every 4,096 UTF-16 units (String.substring). */
const MINECRAFT_FRAGMENT_CHARS = 4096;
/** What srcds sends after mirroring the empty RESPONSE_VALUE. */
const SRCDS_EXTRA_BODY = Buffer.from([0x00, 0x01, 0x00, 0x00]);

export async function startRconServer(options: RconServerOptions): Promise<FakeRconServer> {
  const server = new FakeRconServerImpl(options);
  await server.up();
  return server;
}

class FakeRconServerImpl extends SimListener<RconServerOptions> implements FakeRconServer {
  readonly flavour: RconFlavour;
  readonly game: 'zomboid' | undefined;
  readonly executed: ExecutedCommand[] = [];
  readonly world: MinecraftWorld;
  readonly #faults: RconFault[] = [];
  #password: string;
  #loginDelayMs = 0;
  #answerDelayMs = 0;
  #handler: RconCommandHandler | undefined;
  totalConnections = 0;
  framingViolations = 0;
  maxInFlight = 0;
  floodedBytes = 0;

  constructor(options: RconServerOptions) {
    super(options, 'fake RCON server');
    this.flavour = options.flavour ?? 'minecraft';
    this.game = options.game;
    this.#password = options.password;
    this.world = { players: new SimPlayers(options.players ?? []), maxPlayers: options.maxPlayers ?? 20, balances: new Map() };
  }

  get connections(): number {
    return this.openSockets;
  }

  get password(): string {
    return this.#password;
  }

  get logger(): Logger | undefined {
    return this.options.logger;
  }

  online(): string[] {
    return this.world.players.list();
  }

  setOnline(names: readonly string[]): void {
    this.world.players.set(names);
  }

  join(name: string): void {
    this.world.players.join(name);
  }

  leave(name: string): void {
    this.world.players.leave(name);
  }

  failNext(kind: RconFault): void {
    this.#faults.push(kind);
  }

  setHandler(handler: RconCommandHandler | undefined): void {
    this.#handler = handler;
  }

  setPassword(password: string): void {
    this.#password = password;
  }

  setLoginDelay(ms: number): void {
    this.#loginDelayMs = ms;
  }

  setAnswerDelay(ms: number): void {
    this.#answerDelayMs = ms;
  }

  get answerDelayMs(): number {
    return this.#answerDelayMs;
  }

  /** Resolves once a login may be answered. */
  async loginPause(): Promise<void> {
    // Unref'd: a login held this long must not keep a test process alive once everything else closed.
    if (this.#loginDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.#loginDelayMs).unref());
  }

  override async up(): Promise<void> {
    await super.up();
    this.logger?.debug({ port: this.port, flavour: this.flavour }, 'fake RCON server listening');
  }

  protected newServer(): Server {
    return createServer((socket) => this.#accept(socket));
  }

  /** Fault for this command, if it is one that faults apply to. */
  takeFault(command: string): RconFault | undefined {
    return isQueryCommand(command) ? undefined : this.#faults.shift();
  }

  /** Runs a command: records it, then computes the answer. */
  run(command: string, connection: number): { readonly answer: SimAnswer; readonly ran: ExecutedCommand } {
    const ran: ExecutedCommand = { command, at: this.now(), query: isQueryCommand(command), connection };
    this.executed.push(ran);
    this.logger?.debug({ command, connection }, 'fake RCON server ran a command');
    return { answer: this.#answer(command), ran };
  }

  /** Called once an answer to `ran` was handed to the socket. */
  answered(ran: ExecutedCommand): void {
    ran.answeredAt = this.now();
  }

  #answer(command: string): SimAnswer {
    const custom = this.#handler?.(command, { flavour: this.flavour, online: this.online() });
    if (custom !== undefined) return typeof custom === 'string' ? { text: custom } : custom;
    const sim = runSimCommand(command);
    if (sim) return sim;
    if (this.game === 'zomboid') return runZomboidCommand(command, this.world.players);
    if (this.flavour === 'minecraft') return runMinecraftCommand(command, this.world);
    if (this.flavour === 'source') return runSourceCommand(command, this.world.players, this.world.maxPlayers);
    return runPalworldCommand(command, this.world.players);
  }

  noteInFlight(count: number): void {
    this.maxInFlight = Math.max(this.maxInFlight, count);
  }

  #accept(socket: Socket): void {
    this.totalConnections += 1;
    this.keep(socket);
    socket.setNoDelay(true);
    socket.on('error', () => socket.destroy());
    new SimConnection(this, socket, this.totalConnections);
  }
}

/** One client connection; processes requests strictly one after another, as the real servers do. */
class SimConnection {
  readonly #server: FakeRconServerImpl;
  readonly #socket: Socket;
  readonly #number: number;
  /** Counts commands received vs answered, independent of how the flavour reads. */
  readonly #shadow = new PacketDecoder();
  #received = 0;
  #answered = 0;
  /** Unread bytes (Minecraft reads raw) or decoded packets (the others). */
  #raw: Buffer = Buffer.alloc(0);
  readonly #packets: RconPacket[] = [];
  readonly #decoder = new PacketDecoder({ maxPacketLength: SPEC_MAX_BODY_BYTES + 10 });
  #authed = false;
  #busy = false;

  constructor(server: FakeRconServerImpl, socket: Socket, number: number) {
    this.#server = server;
    this.#socket = socket;
    this.#number = number;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
  }

  #onData(chunk: Buffer): void {
    this.#countRequests(chunk);
    if (this.#server.flavour === 'minecraft') {
      this.#raw = Buffer.concat([this.#raw, chunk]);
    } else {
      const { packets, error } = this.#decoder.push(chunk);
      this.#packets.push(...packets);
      if (error) {
        this.#socket.destroy();
        return;
      }
    }
    void this.#pump();
  }

  #countRequests(chunk: Buffer): void {
    // Garbage is left to the real reader below to deal with.
    for (const packet of this.#shadow.push(chunk).packets) {
      if (packet.type === PacketType.EXECCOMMAND && this.#authed) {
        this.#received += 1;
        this.#server.noteInFlight(this.#received - this.#answered);
      }
    }
  }

  async #pump(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      while (!this.#socket.destroyed) {
        if (this.#server.flavour === 'minecraft') {
          if (this.#raw.length === 0) break;
          // Like RconClient: whatever is there now, up to 1,460 bytes, is one read.
          const read = this.#raw.subarray(0, MINECRAFT_READ_BYTES);
          this.#raw = this.#raw.subarray(read.length);
          const keepGoing = await this.#minecraftRead(read);
          if (!keepGoing) return; // hung: stays busy for good
        } else {
          const packet = this.#packets.shift();
          if (!packet) break;
          const keepGoing = await this.#sourcePacket(packet);
          if (!keepGoing) return;
        }
      }
    } catch {
      this.#socket.destroy();
    }
    this.#busy = false;
  }

  /** Returns false when the connection must read nothing more (hang). */
  async #minecraftRead(read: Buffer): Promise<boolean> {
    if (read.length < 10 || read.readInt32LE(0) !== read.length - 4) {
      this.#server.framingViolations += 1;
      this.#server.logger?.debug({ bytes: read.length }, 'fake Minecraft RCON: read was not exactly one packet; closing');
      this.#socket.destroy();
      return false;
    }
    const id = read.readInt32LE(4);
    const type = read.readInt32LE(8);
    const body = bodyText(read.subarray(12));
    if (type === PacketType.EXECCOMMAND) {
      if (!this.#authed) {
        this.#send(-1, PacketType.AUTH_RESPONSE, '');
        return true;
      }
      return this.#runCommand(id, body, (text) => {
        for (let start = 0; ; start += MINECRAFT_FRAGMENT_CHARS) {
          this.#send(id, PacketType.RESPONSE_VALUE, text.slice(start, start + MINECRAFT_FRAGMENT_CHARS));
          if (start + MINECRAFT_FRAGMENT_CHARS >= text.length) break;
        }
      });
    }
    if (type === PacketType.AUTH) {
      await this.#server.loginPause();
      this.#authed = body !== '' && body === this.#server.password;
      if (this.#authed) this.#send(id, PacketType.AUTH_RESPONSE, '');
      else this.#refuseLogin();
      return true;
    }
    this.#send(id, PacketType.RESPONSE_VALUE, `Unknown request ${(type >>> 0).toString(16)}`);
    return true;
  }

  async #sourcePacket(packet: RconPacket): Promise<boolean> {
    const id0 = this.#server.flavour === 'id0';
    const replyId = (id: number) => (id0 ? 0 : id);
    const body = bodyText(packet.body);
    if (packet.type === PacketType.AUTH) {
      await this.#server.loginPause();
      this.#authed = body !== '' && body === this.#server.password;
      if (!id0) this.#send(packet.id, PacketType.RESPONSE_VALUE, '');
      if (this.#authed) this.#send(replyId(packet.id), PacketType.AUTH_RESPONSE, '');
      else this.#refuseLogin();
      return true;
    }
    if (!this.#authed) {
      // srcds drops a connection that sends anything but a login first.
      this.#socket.destroy();
      return false;
    }
    if (packet.type === PacketType.EXECCOMMAND) {
      return this.#runCommand(replyId(packet.id), body, (text) => {
        if (id0) {
          this.#send(0, PacketType.RESPONSE_VALUE, text);
          return;
        }
        if (this.#server.game === 'zomboid') {
          this.#send(packet.id, PacketType.RESPONSE_VALUE, text);
          return;
        }
        const bytes = Buffer.from(text, 'utf8');
        // srcds splits by bytes, so a UTF-8 sequence may straddle two packets.
        for (let start = 0; ; start += SPEC_MAX_BODY_BYTES) {
          this.#send(packet.id, PacketType.RESPONSE_VALUE, bytes.subarray(start, start + SPEC_MAX_BODY_BYTES));
          if (start + SPEC_MAX_BODY_BYTES >= bytes.length) break;
        }
      });
    }
    if (packet.type === PacketType.RESPONSE_VALUE && !id0) {
      this.#send(packet.id, PacketType.RESPONSE_VALUE, '');
      this.#send(packet.id, PacketType.RESPONSE_VALUE, this.#server.game === 'zomboid' ? '' : SRCDS_EXTRA_BODY);
    }
    return true;
  }

  async #runCommand(replyId: number, command: string, answer: (text: string) => void): Promise<boolean> {
    const fault = this.#server.takeFault(command);
    if (fault === 'close-without-running') {
      this.#socket.destroy();
      return false;
    }
    const { answer: result, ran } = this.#server.run(command, this.#number);
    if (fault === 'hang') return false;
    if (fault === 'flood') {
      await this.#flood(replyId);
      return false;
    }
    if (fault === 'close-before-answer') {
      this.#socket.destroy();
      return false;
    }
    if (result.after) await result.after.catch(() => undefined);
    const delayMs = (result.delayMs ?? 0) + this.#server.answerDelayMs;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (this.#socket.destroyed) return false;
    answer(result.text);
    this.#server.answered(ran);
    this.#answered += 1;
    if (fault === 'close-after-answer') {
      this.#socket.destroySoon();
      return false;
    }
    return true;
  }

  /** Full-size fragments with `replyId` until the socket is gone, waiting for 'drain' when the client reads slower. */
  async #flood(replyId: number): Promise<void> {
    const fragment = encodePacket(replyId, PacketType.RESPONSE_VALUE, 'x'.repeat(SPEC_MAX_BODY_BYTES));
    const socket = this.#socket;
    const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    while (!socket.destroyed && socket.writable) {
      this.#server.floodedBytes += fragment.length;
      if (!socket.write(fragment)) {
        await Promise.race([new Promise<void>((resolve) => socket.once('drain', () => resolve())), gone]);
      }
    }
  }

  #refuseLogin(): void {
    this.#server.authFailures += 1;
    this.#send(-1, PacketType.AUTH_RESPONSE, '');
  }

  #send(id: number, type: number, body: string | Buffer): void {
    if (this.#socket.destroyed || !this.#socket.writable) return;
    this.#socket.write(encodePacket(id, type, body));
  }
}
