import type { AddressInfo, Server, Socket } from 'node:net';
import type { Logger } from 'pino';

/** Where a simulator listens, what it logs to, and its clock. */
export interface SimPlace {
  /** 127.0.0.1 by default. */
  readonly host?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  readonly logger?: Logger;
  /** Timestamp source for what the simulator records; Date.now by default. */
  readonly now?: () => number;
}

/**
 * A simulated game server's listening side, which tests stop and start again as a real server
 * restarts: up() listens (on the port it had, once it has one), down() drops every connection and
 * stops listening, close() for good. The RCON, telnet and TShock simulators extend it.
 */
export abstract class SimListener<O extends SimPlace = SimPlace> {
  readonly host: string;
  /** Logins refused (a wrong password or token), since the simulator started. */
  authFailures = 0;
  protected readonly options: O;
  protected readonly now: () => number;
  readonly #name: string;
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #port: number;
  #closed = false;

  /** `name` says which simulator in errors and logs: "fake RCON server". */
  constructor(options: O, name: string) {
    this.options = options;
    this.host = options.host ?? '127.0.0.1';
    this.#port = options.port ?? 0;
    this.now = options.now ?? Date.now;
    this.#name = name;
  }

  get port(): number {
    return this.#port;
  }

  /** A new server, not listening yet, that serves this simulator's connections. */
  protected abstract newServer(): Server;

  /** Connections kept (see keep()) and not closed yet. */
  protected get openSockets(): number {
    return this.#sockets.size;
  }

  /** Keeps `socket` until it closes, so that down() can drop it. */
  protected keep(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
  }

  /** Destroys every connection the simulator holds: by default, those it keeps. */
  protected dropConnections(): void {
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
  }

  async up(): Promise<void> {
    if (this.#closed) throw new Error(`the ${this.#name} was closed; start a new one`);
    if (this.#server) return;
    const server = this.newServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error) => this.options.logger?.warn({ event: 'fake.error', err: error }, `${this.#name} error`));
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
  }

  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.dropConnections();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async restart(): Promise<void> {
    await this.down();
    await this.up();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.down();
  }

  stop(): Promise<void> {
    return this.close();
  }
}
