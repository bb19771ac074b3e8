import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { Logger } from 'pino';
import { startDeadline, systemClock, type Clock } from '../clock.js';
import { decodeClientPacket, encodeAnswer, encodeLoginAnswer, encodeMessage } from '../protocols/battleye/packet.js';
import { runBattlEyeCommand, type BattlEyeAnswer } from './battleye-commands.js';
import { BattlEyeRoster, type SimBattlEyePlayer } from './battleye-roster.js';
import { isQueryCommand } from './rcon-answers.js';

/**
 * A fake BattlEye RCon server (DayZ, Arma 3) on 127.0.0.1 over UDP, for `porter demo`, `porter sim`
 * and the tests (which lose its datagrams and play faults on it through
 * src/sim/faults/battleye-server.ts). From BattlEye's BERConProtocol.txt: a login answered `0x00 0x01` or `0x00 0x00`, and not
 * at all while RCon is disabled (empty password); commands answered with their sequence number,
 * long answers split into parts that each carry `0x00 total index`; every server message sent
 * again every 2 s until acknowledged, and a client that has not acknowledged one after 5 sends
 * over 10 s dropped; a client that sent no command for 45 s dropped. A dropped or unknown client
 * gets no answer to anything but a login. Every command datagram runs, once per datagram.
 *
 * `partBytes` (1,000) keeps each datagram within the 1,024-byte buffers that common BattlEye RCon
 * clients read with (WoozyMasta/bercon-cli). "RCon admin #0 (ip:port) logged in" follows each
 * login, as BattlEye prints it to every logged-in client.
 */

export interface BattlEyeServerOptions {
  /** Empty: RCon disabled, logins go unanswered (as BattlEye does without RConPassword). */
  readonly password: string;
  readonly players?: readonly (string | SimBattlEyePlayer)[];
  /** 0 (default) picks a free port. */
  readonly port?: number;
  readonly host?: string;
  /** Drives message retries and the 45 s keepalive rule; the system clock by default. */
  readonly clock?: Clock;
  /** Answer text per datagram; longer answers are split. */
  readonly partBytes?: number;
  readonly logger?: Logger;
  /**
   * A server-side mod's commands, answered before the game's own (vanilla DayZ gives no item over
   * RCon: stores deliver through a mod). Undefined from it: the game's answer.
   */
  readonly mod?: BattlEyeCommandHandler;
}

export interface BattlEyeExecuted {
  readonly command: string;
  readonly at: number;
  /** A read-only listing (`players`): skip it when counting deliveries. */
  readonly query: boolean;
  /** Which login (1, 2, …) sent it. */
  readonly client: number;
}

/**
 * Which datagram of a command the network loses: `command`, its datagram on the way in (it does
 * not run, nor count as a command); `answer`, every datagram of its answer (it runs).
 */
export type BattlEyeLoss = 'command' | 'answer';

export type BattlEyeCommandHandler = (command: string, roster: BattlEyeRoster) => string | BattlEyeAnswer | undefined;

export interface FakeBattlEyeServer {
  readonly host: string;
  readonly port: number;
  /** Every command the server ran, in order (queries flagged; keepalives are not commands). */
  readonly executed: BattlEyeExecuted[];
  readonly roster: BattlEyeRoster;
  readonly stats: BattlEyeServerStats;
  /** Clients logged in now. */
  readonly clients: number;
  /** Server messages sent and not acknowledged yet, all clients together. */
  readonly unacknowledged: number;
  join(player: string | SimBattlEyePlayer): void;
  leave(name: string): void;
  setPassword(password: string): void;
  /** A server message to every logged-in client, retried until acknowledged. */
  broadcast(text: string): void;
  /** Forgets every login, as BattlEye does when it restarts: clients get no answers until they log in again. */
  dropClients(): void;
  /** Closes the socket, keeping state: the game server is down (the kernel refuses datagrams to the port). */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export interface BattlEyeServerStats {
  logins: number;
  authFailures: number;
  /** Login attempts left unanswered because RCon is disabled. */
  unansweredLogins: number;
  /** Empty commands received from logged-in clients (keepalives, probes, rechecks), answered or not. */
  keepalives: number;
  messagesSent: number;
  /** Sends of a message beyond its first. */
  messageRetries: number;
  acks: number;
  /** Clients dropped for not acknowledging a message or not sending a command for 45 s. */
  droppedClients: number;
  /** Datagrams that were not BattlEye RCon, commands from clients not logged in, datagrams lost or unheard while silent. */
  ignored: number;
  /** Most unacknowledged messages held at once. */
  maxUnacknowledged: number;
}

const MESSAGE_RETRY_MS = 2_000;
const MESSAGE_SENDS = 5;
const CLIENT_SILENCE_MS = 45_000;

interface Outstanding {
  readonly datagram: Buffer;
  sends: number;
  cancel: () => void;
}

interface Client {
  readonly number: number;
  readonly adminId: number;
  readonly address: string;
  readonly port: number;
  lastCommandAt: number;
  nextMessageSeq: number;
  readonly outstanding: Map<number, Outstanding>;
}

export async function startBattlEyeServer(options: BattlEyeServerOptions): Promise<FakeBattlEyeServer> {
  const server = new BattlEyeServer(options);
  await server.up();
  return server;
}

/**
 * The server. `passes`, `lost`, `order` and `answerFor` are the seams
 * src/sim/faults/battleye-server.ts overrides to lose datagrams, shuffle parts and answer a
 * test's commands.
 */
export class BattlEyeServer implements FakeBattlEyeServer {
  readonly host: string;
  readonly executed: BattlEyeExecuted[] = [];
  readonly roster: BattlEyeRoster;
  readonly stats: BattlEyeServerStats = {
    logins: 0,
    authFailures: 0,
    unansweredLogins: 0,
    keepalives: 0,
    messagesSent: 0,
    messageRetries: 0,
    acks: 0,
    droppedClients: 0,
    ignored: 0,
    maxUnacknowledged: 0,
  };
  readonly #clock: Clock;
  readonly #partBytes: number;
  readonly #logger: Logger | undefined;
  readonly #clients = new Map<string, Client>();
  readonly #mod: BattlEyeCommandHandler | undefined;
  #socket: Socket | undefined;
  #port: number;
  #password: string;
  #logins = 0;
  #closed = false;

  constructor(options: BattlEyeServerOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.#port = options.port ?? 0;
    this.#password = options.password;
    this.#clock = options.clock ?? systemClock;
    this.#partBytes = options.partBytes ?? 1000;
    this.#logger = options.logger;
    this.#mod = options.mod;
    this.roster = new BattlEyeRoster(options.players ?? []);
  }

  get port(): number {
    return this.#port;
  }

  get clients(): number {
    return this.#clients.size;
  }

  get unacknowledged(): number {
    let count = 0;
    for (const client of this.#clients.values()) count += client.outstanding.size;
    return count;
  }

  join(player: string | SimBattlEyePlayer): void {
    if (this.roster.find(typeof player === 'string' ? player : player.name)) return;
    const seat = this.roster.join(player);
    this.broadcast(`Player #${seat.slot} ${seat.name} (${seat.address}) connected`);
  }

  leave(name: string): void {
    const seat = this.roster.leave(name);
    if (seat) this.broadcast(`Player #${seat.slot} ${seat.name} disconnected`);
  }

  setPassword(password: string): void {
    this.#password = password;
  }

  /** Whether a datagram in or out gets through: every one, on loopback. */
  passes(_direction: 'in' | 'out'): boolean {
    return true;
  }

  /** Which datagram of `command` ('': an empty command, a keepalive) is lost: none, on loopback. */
  lost(_command: string): BattlEyeLoss | undefined {
    return undefined;
  }

  /** The datagrams of a split answer, in the order they go out: in order. */
  order(parts: Buffer[]): Buffer[] {
    return parts;
  }

  /** What `command` answers: the mod's answer, else the game's. */
  answerFor(command: string, adminId: number): BattlEyeAnswer {
    const own = this.#mod?.(command, this.roster);
    if (own === undefined) return runBattlEyeCommand(command, this.roster, adminId);
    return typeof own === 'string' ? { text: own } : own;
  }

  broadcast(text: string): void {
    for (const client of this.#clients.values()) this.#message(client, text);
  }

  dropClients(): void {
    for (const client of [...this.#clients.values()]) this.#forget(client);
  }

  async up(): Promise<void> {
    if (this.#closed) throw new Error('the fake BattlEye server was closed; start a new one');
    if (this.#socket) return;
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.#port, this.host, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    socket.on('error', (error) => this.#logger?.warn({ event: 'fake.error', err: error }, 'fake BattlEye server error'));
    socket.on('message', (datagram: Buffer, from: RemoteInfo) => this.#onDatagram(datagram, from));
    this.#socket = socket;
    this.#port = socket.address().port;
  }

  async down(): Promise<void> {
    const socket = this.#socket;
    this.#socket = undefined;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.dropClients();
    await this.down();
  }

  #onDatagram(datagram: Buffer, from: RemoteInfo): void {
    if (!this.passes('in')) {
      this.stats.ignored += 1;
      return;
    }
    const decoded = decodeClientPacket(datagram);
    if ('problem' in decoded) {
      this.stats.ignored += 1;
      return;
    }
    const key = `${from.address}:${from.port}`;
    const packet = decoded.packet;
    if (packet.kind === 'login') {
      this.#login(key, from, packet.password.toString('utf8'));
      return;
    }
    const client = this.#clients.get(key);
    if (!client) {
      this.stats.ignored += 1;
      return;
    }
    if (packet.kind === 'ack') {
      const outstanding = client.outstanding.get(packet.seq);
      if (outstanding) {
        outstanding.cancel();
        client.outstanding.delete(packet.seq);
      }
      this.stats.acks += 1;
      return;
    }
    const emptyLoss = packet.body.length === 0 ? this.lost('') : undefined;
    if (emptyLoss === 'command') {
      this.stats.ignored += 1;
      return;
    }
    const now = this.#clock.now();
    if (now - client.lastCommandAt > CLIENT_SILENCE_MS) {
      this.#drop(client, 'no command for 45 s');
      this.stats.ignored += 1;
      return;
    }
    client.lastCommandAt = now;
    const command = packet.body.toString('utf8');
    if (command === '') {
      this.stats.keepalives += 1;
      if (emptyLoss !== 'answer') this.#sendTo(client, encodeAnswer(packet.seq, Buffer.alloc(0)));
      return;
    }
    this.#run(client, packet.seq, command);
  }

  #login(key: string, from: RemoteInfo, password: string): void {
    if (this.#password === '') {
      this.stats.unansweredLogins += 1;
      return;
    }
    const to = { address: from.address, port: from.port };
    if (password !== this.#password) {
      this.stats.authFailures += 1;
      this.#sendTo(to, encodeLoginAnswer(false));
      return;
    }
    const existing = this.#clients.get(key);
    if (existing) this.#forget(existing);
    this.stats.logins += 1;
    this.#logins += 1;
    const client: Client = {
      number: this.#logins,
      adminId: this.#logins - 1,
      ...to,
      lastCommandAt: this.#clock.now(),
      nextMessageSeq: 0,
      outstanding: new Map(),
    };
    this.#clients.set(key, client);
    this.#sendTo(to, encodeLoginAnswer(true));
    this.broadcast(`RCon admin #${client.adminId} (${from.address}:${from.port}) logged in`);
  }

  #run(client: Client, seq: number, command: string): void {
    const loss = this.lost(command);
    if (loss === 'command') {
      this.stats.ignored += 1;
      return;
    }
    this.executed.push({ command, at: this.#clock.now(), query: isQueryCommand(command), client: client.number });
    this.#logger?.debug({ event: 'fake.command', command, connection: client.number }, 'fake BattlEye server ran a command');
    const answer = this.answerFor(command, client.adminId);
    if (loss !== 'answer') for (const part of this.#parts(seq, Buffer.from(answer.text, 'utf8'))) this.#sendTo(client, part);
    for (const message of answer.messages ?? []) this.broadcast(message);
  }

  #parts(seq: number, body: Buffer): Buffer[] {
    if (body.length <= this.#partBytes) return [encodeAnswer(seq, body)];
    const total = Math.ceil(body.length / this.#partBytes);
    if (total > 255) throw new Error(`the fake BattlEye server cannot split ${body.length} bytes into 255 parts of ${this.#partBytes}`);
    const parts: Buffer[] = [];
    for (let index = 0; index < total; index += 1) {
      parts.push(encodeAnswer(seq, body.subarray(index * this.#partBytes, (index + 1) * this.#partBytes), { total, index }));
    }
    return this.order(parts);
  }

  /** Sends a server message and keeps sending it every 2 s until acknowledged; the fifth unacknowledged send drops the client. */
  #message(client: Client, text: string): void {
    const seq = client.nextMessageSeq;
    client.nextMessageSeq = (seq + 1) & 0xff;
    client.outstanding.get(seq)?.cancel();
    const outstanding: Outstanding = { datagram: encodeMessage(seq, text), sends: 0, cancel: () => {} };
    client.outstanding.set(seq, outstanding);
    this.stats.maxUnacknowledged = Math.max(this.stats.maxUnacknowledged, this.unacknowledged);
    const attempt = () => {
      if (client.outstanding.get(seq) !== outstanding) return;
      if (outstanding.sends === MESSAGE_SENDS) {
        this.#drop(client, `message ${seq} not acknowledged after ${MESSAGE_SENDS} sends`);
        return;
      }
      outstanding.sends += 1;
      if (outstanding.sends > 1) this.stats.messageRetries += 1;
      else this.stats.messagesSent += 1;
      this.#sendTo(client, outstanding.datagram);
      outstanding.cancel = startDeadline(this.#clock, MESSAGE_RETRY_MS, attempt);
    };
    attempt();
  }

  #drop(client: Client, why: string): void {
    this.stats.droppedClients += 1;
    this.#logger?.debug({ event: 'fake.dropped', connection: client.number, reason: why }, 'fake BattlEye server dropped a client');
    this.#forget(client);
  }

  #forget(client: Client): void {
    for (const outstanding of client.outstanding.values()) outstanding.cancel();
    client.outstanding.clear();
    this.#clients.delete(`${client.address}:${client.port}`);
  }

  #sendTo(to: { readonly address: string; readonly port: number }, datagram: Buffer): void {
    if (!this.passes('out') || !this.#socket) return;
    this.#socket.send(datagram, to.port, to.address);
  }
}
