import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { Logger } from 'pino';
import { startDeadline, systemClock, type Clock } from '../clock.js';
import { decodeClientPacket, encodeAnswer, encodeLoginAnswer, encodeMessage } from '../protocols/battleye/packet.js';
import { runBattlEyeCommand, type BattlEyeAnswer } from './battleye-commands.js';
import { BattlEyeRoster, type SimBattlEyePlayer } from './battleye-roster.js';
import { isQueryCommand } from './rcon-answers.js';

/**
 * A fake BattlEye RCon server (DayZ, Arma 3) on 127.0.0.1 over UDP, for `porter demo` and the
 * tests. From BattlEye's BERConProtocol.txt: a login answered `0x00 0x01` or `0x00 0x00`, and not
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
 * Faults for the next command that is not a query (or, aimed at `empty command`, the next empty
 * command: a keepalive, a probe, a recheck):
 * - drop-command: its datagram is lost on the way in; it does not run (nor count as a command);
 * - drop-answer: it runs, and every datagram of its answer is lost.
 */
export type BattlEyeFault = 'drop-command' | 'drop-answer';

/** What a fault is aimed at: the next delivery command, or the next empty command. */
export type BattlEyeFaultTarget = 'command' | 'empty command';

/** How the parts of a split answer go out. */
export type PartOrder = 'in-order' | 'reversed' | 'duplicated';

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
  failNext(fault: BattlEyeFault, target?: BattlEyeFaultTarget): void;
  setPartOrder(order: PartOrder): void;
  setHandler(handler: BattlEyeCommandHandler | undefined): void;
  setPassword(password: string): void;
  /** Stops answering anything (datagrams in are ignored, nothing goes out) until `silent(false)`. */
  silent(on: boolean): void;
  /** Loses each datagram in and out with these odds (0 to 1); `random` defaults to Math.random. */
  setLoss(loss: { readonly in?: number; readonly out?: number }, random?: () => number): void;
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
  const server = new FakeBattlEyeServerImpl(options);
  await server.up();
  return server;
}

class FakeBattlEyeServerImpl implements FakeBattlEyeServer {
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
  readonly #faults: BattlEyeFault[] = [];
  readonly #emptyFaults: BattlEyeFault[] = [];
  #socket: Socket | undefined;
  #port: number;
  #password: string;
  #handler: BattlEyeCommandHandler | undefined;
  #partOrder: PartOrder = 'in-order';
  #silent = false;
  #loss = { in: 0, out: 0 };
  #random: () => number = Math.random;
  #logins = 0;
  #closed = false;

  constructor(options: BattlEyeServerOptions) {
    this.host = options.host ?? '127.0.0.1';
    this.#port = options.port ?? 0;
    this.#password = options.password;
    this.#clock = options.clock ?? systemClock;
    this.#partBytes = options.partBytes ?? 1000;
    this.#logger = options.logger;
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

  failNext(fault: BattlEyeFault, target: BattlEyeFaultTarget = 'command'): void {
    (target === 'command' ? this.#faults : this.#emptyFaults).push(fault);
  }

  setPartOrder(order: PartOrder): void {
    this.#partOrder = order;
  }

  setHandler(handler: BattlEyeCommandHandler | undefined): void {
    this.#handler = handler;
  }

  setPassword(password: string): void {
    this.#password = password;
  }

  silent(on: boolean): void {
    this.#silent = on;
  }

  setLoss(loss: { readonly in?: number; readonly out?: number }, random: () => number = Math.random): void {
    this.#loss = { in: loss.in ?? 0, out: loss.out ?? 0 };
    this.#random = random;
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
    socket.on('error', (error) => this.#logger?.warn({ err: error }, 'fake BattlEye server error'));
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
    if (this.#silent || this.#lost('in')) {
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
    const emptyFault = packet.body.length === 0 ? this.#emptyFaults.shift() : undefined;
    if (emptyFault === 'drop-command') {
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
      if (emptyFault !== 'drop-answer') this.#sendTo(client, encodeAnswer(packet.seq, Buffer.alloc(0)));
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
    const query = isQueryCommand(command);
    const fault = query ? undefined : this.#faults.shift();
    if (fault === 'drop-command') {
      this.stats.ignored += 1;
      return;
    }
    this.executed.push({ command, at: this.#clock.now(), query, client: client.number });
    this.#logger?.debug({ command, client: client.number }, 'fake BattlEye server ran a command');
    const custom = this.#handler?.(command, this.roster);
    const answer =
      custom === undefined
        ? runBattlEyeCommand(command, this.roster, client.adminId)
        : typeof custom === 'string'
          ? { text: custom }
          : custom;
    if (fault !== 'drop-answer') for (const part of this.#parts(seq, Buffer.from(answer.text, 'utf8'))) this.#sendTo(client, part);
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
    if (this.#partOrder === 'reversed') return parts.reverse();
    if (this.#partOrder === 'duplicated') return parts.flatMap((part) => [part, part]);
    return parts;
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
    this.#logger?.debug({ client: client.number, why }, 'fake BattlEye server dropped a client');
    this.#forget(client);
  }

  #forget(client: Client): void {
    for (const outstanding of client.outstanding.values()) outstanding.cancel();
    client.outstanding.clear();
    this.#clients.delete(`${client.address}:${client.port}`);
  }

  #sendTo(to: { readonly address: string; readonly port: number }, datagram: Buffer): void {
    if (this.#silent || this.#lost('out') || !this.#socket) return;
    this.#socket.send(datagram, to.port, to.address);
  }

  #lost(direction: 'in' | 'out'): boolean {
    const odds = this.#loss[direction];
    return odds > 0 && this.#random() < odds;
  }
}
