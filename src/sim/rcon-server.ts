import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { bodyText, encodePacket, PacketDecoder, PacketType, SPEC_MAX_BODY_BYTES, type RconPacket } from '../protocols/rcon/codec.js';
import type { GameName } from '../games/registry.js';
import type { RconFlavour } from '../protocols/rcon/exchange.js';
import { runSimCommand, type SimAnswer } from './rcon-answers.js';
import { rconConsoleFor } from './rcon-consoles.js';
import { SimPlayers } from './rcon-players.js';
import type { RconConsole, RconWorld } from './rcon-world.js';
import { SimListener, type SimPlace } from './sim-listener.js';

/**
 * A fake RCON game server on 127.0.0.1 for `porter demo`, `porter sim` and the tests (which play
 * faults on it through src/sim/faults/rcon-server.ts). Minecraft flavour copies
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
  /** The dialect on the wire; the game's own by default (rcon-consoles.ts). */
  readonly flavour?: RconFlavour;
  /**
   * The game whose console it answers as, by its id (src/games/<id>.ts); the dialect's own game by
   * default (Minecraft, Source, Palworld). `zomboid` also copies Project Zomboid's wire: it speaks
   * the Source dialect but never splits an answer, and answers an empty RESPONSE_VALUE with two
   * identical empty packets instead of srcds' pair.
   */
  readonly game?: GameName;
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

/** One command on one connection, as the server serves it (src/sim/faults/ serves some otherwise). */
export interface RconExchange {
  readonly command: string;
  /** The id its answer carries (0 in the id0 flavour). */
  readonly replyId: number;
  /** The connection it came in on. */
  readonly socket: Socket;
  /** Runs the command: records it in `executed`, and works out its answer. */
  run(): { readonly answer: SimAnswer; readonly ran: ExecutedCommand };
  /** Sends `text` as the answer to `ran`, in the packets of the flavour; false when the connection is gone. */
  send(ran: ExecutedCommand, text: string): boolean;
}

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
  online(): string[];
  setOnline(names: readonly string[]): void;
  join(name: string): void;
  leave(name: string): void;
  setPassword(password: string): void;
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
  const server = new RconServer(options);
  await server.up();
  return server;
}

/**
 * The server. Its connections call `login`, `serve` and `answerFor`, the seams
 * src/sim/faults/rcon-server.ts overrides to hold logins and answers back and to play faults.
 */
export class RconServer extends SimListener<RconServerOptions> implements FakeRconServer {
  readonly flavour: RconFlavour;
  readonly game: GameName;
  readonly executed: ExecutedCommand[] = [];
  readonly world: RconWorld;
  readonly #console: RconConsole;
  /** Whether a command only reads (a player list): one every simulator knows, or one of this game's own. */
  readonly isQuery: (command: string) => boolean;
  #password: string;
  totalConnections = 0;
  framingViolations = 0;
  maxInFlight = 0;

  constructor(options: RconServerOptions) {
    super(options, 'fake RCON server');
    const { game, flavour, run, isQuery } = rconConsoleFor(options);
    this.flavour = flavour;
    this.game = game;
    this.#console = run;
    this.isQuery = isQuery;
    this.#password = options.password;
    this.world = { players: new SimPlayers(options.players ?? []), maxPlayers: options.maxPlayers ?? 20, balances: new Map() };
  }

  get connections(): number {
    return this.openSockets;
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

  setPassword(password: string): void {
    this.#password = password;
  }

  /** Whether a login with `password` succeeds: it is the server's password now. */
  login(password: string): Promise<boolean> {
    return Promise.resolve(password !== '' && password === this.#password);
  }

  override async up(): Promise<void> {
    await super.up();
    this.logger?.debug({ event: 'fake.listening', port: this.port, flavour: this.flavour }, 'fake RCON server listening');
  }

  protected newServer(): Server {
    return createServer((socket) => this.#accept(socket));
  }

  /** Serves one command: runs it, then answers once the answer is due. True: the connection reads on. */
  async serve(exchange: RconExchange): Promise<boolean> {
    const { answer, ran } = exchange.run();
    return this.reply(exchange, ran, answer);
  }

  /** Answers `ran` once its answer is due; false when the connection is gone by then. */
  async reply(exchange: RconExchange, ran: ExecutedCommand, answer: SimAnswer): Promise<boolean> {
    await this.answerDue(answer);
    return exchange.send(ran, answer.text);
  }

  /** Resolves when `answer` is due: at once, or after a slow command's delay. */
  async answerDue(answer: SimAnswer): Promise<void> {
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
  }

  /** Runs a command: records it, then computes the answer. */
  run(command: string, connection: number): { readonly answer: SimAnswer; readonly ran: ExecutedCommand } {
    const ran: ExecutedCommand = { command, at: this.now(), query: this.isQuery(command), connection };
    this.executed.push(ran);
    this.logger?.debug({ event: 'fake.command', command, connection }, 'fake RCON server ran a command');
    return { answer: this.answerFor(command), ran };
  }

  /** Called once an answer to `ran` was handed to the socket. */
  answered(ran: ExecutedCommand): void {
    ran.answeredAt = this.now();
  }

  /** What the game answers to `command`. */
  answerFor(command: string): SimAnswer {
    const sim = runSimCommand(command);
    if (sim) return sim;
    return this.#console(command, this.world);
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
  readonly #server: RconServer;
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

  constructor(server: RconServer, socket: Socket, number: number) {
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
      this.#server.logger?.debug(
        { event: 'fake.dropped', bytes: read.length },
        'fake Minecraft RCON: read was not exactly one packet; closing',
      );
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
      this.#authed = await this.#server.login(body);
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
      this.#authed = await this.#server.login(body);
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

  /** False when the connection must read nothing more (it hangs or is gone). */
  #runCommand(replyId: number, command: string, answer: (text: string) => void): Promise<boolean> {
    return this.#server.serve({
      command,
      replyId,
      socket: this.#socket,
      run: () => this.#server.run(command, this.#number),
      send: (ran, text) => {
        if (this.#socket.destroyed) return false;
        answer(text);
        this.#server.answered(ran);
        this.#answered += 1;
        return true;
      },
    });
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
