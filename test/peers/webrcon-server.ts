import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * A fake Rust dedicated server's WebRCON (Facepunch.Rcon), for tests. What it copies from Rust:
 * - the password is the URL path, compared literally with "/" + password;
 * - a wrong password is refused before the handshake with a bare close frame (88 02 03 e8) and
 *   no HTTP answer, as Facepunch.Rcon's Fleck server does when it closes the socket at once;
 * - answers are `{Message, Identifier, Type, Stacktrace}` carrying the request's Identifier;
 *   console output and chat arrive unasked with Identifier 0 and -1;
 * - `playerlist` answers with a Message that is itself an indented JSON array;
 * - a command that prints nothing (`say`) gets no answer with its Identifier at all;
 * - commands are handled one at a time, in order, so a later request is answered after earlier ones.
 * Plus, for hostile-server tests: `flood`, frames carrying the request's Identifier without end,
 * as fast as the client reads them, until the client drops the connection (nothing after it is
 * answered); `huge <n>`, one answer frame with a Message of n characters; and sendRaw().
 */

export interface FakeRustPlayer {
  readonly SteamID: string;
  readonly DisplayName: string;
  readonly Ping?: number;
  readonly ConnectedSeconds?: number;
}

export interface FakeWebRconOptions {
  readonly password: string;
  /** Listen on this port (to restart a server where clients expect it); default: any free port. */
  readonly port?: number;
  /** "rust": a close frame before any HTTP answer (default); "http-401": a proxy that answers 401. */
  readonly refuse?: 'rust' | 'http-401';
  /** Unasked console output and chat around every answer, which clients must ignore. Default true. */
  readonly noise?: boolean;
  readonly hostname?: string;
}

export interface ReceivedRequest {
  readonly Identifier: unknown;
  readonly Message: unknown;
  readonly Name: unknown;
}

export class FakeWebRconServer {
  readonly received: ReceivedRequest[] = [];
  players: FakeRustPlayer[] = [];
  /** While true, requests are read and never answered (a server whose main thread hangs). */
  hang = false;
  /** While true, upgrade requests get no answer at all (a server that accepts TCP and stalls). */
  stallHandshakes = false;
  /** Upgrade requests left unanswered while `stallHandshakes` was on. */
  stalledHandshakes = 0;
  refusedAttempts = 0;
  acceptedConnections = 0;
  /** Bytes of frames `flood` sent, all connections together. */
  floodedBytes = 0;
  readonly #http: Server;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #sockets = new Set<Socket>();
  readonly #options: FakeWebRconOptions;
  /** Rust runs commands on its main thread, one after another: answers keep request order. */
  #queue: Promise<void> = Promise.resolve();

  private constructor(options: FakeWebRconOptions) {
    this.#options = options;
    this.#http = createServer((_request, response) => {
      response.writeHead(404).end();
    });
    this.#http.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    this.#http.on('upgrade', (request, socket, head) => {
      if (this.stallHandshakes) {
        this.stalledHandshakes += 1;
        return;
      }
      if (request.url !== `/${options.password}`) {
        this.refusedAttempts += 1;
        if (options.refuse === 'http-401') socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        else socket.end(Buffer.from([0x88, 0x02, 0x03, 0xe8]));
        return;
      }
      this.#wss.handleUpgrade(request, socket, head, (ws) => this.#accept(ws));
    });
  }

  static async start(options: FakeWebRconOptions): Promise<FakeWebRconServer> {
    const server = new FakeWebRconServer(options);
    await new Promise<void>((resolve, reject) => {
      server.#http.once('error', reject);
      server.#http.listen(options.port ?? 0, '127.0.0.1', () => {
        server.#http.off('error', reject);
        resolve();
      });
    });
    return server;
  }

  get port(): number {
    return (this.#http.address() as AddressInfo).port;
  }

  get openConnections(): number {
    return this.#wss.clients.size;
  }

  /** Sends an unasked frame to every client, as Rust does with console output (0) and chat (-1). */
  broadcast(message: string, identifier = 0, type = 'Generic'): void {
    for (const ws of this.#wss.clients) send(ws, identifier, message, type);
  }

  /** Sends any frame to every client: not JSON, wrong types, binary, even invalid UTF-8 in a text frame. */
  sendRaw(data: string | Buffer, options: { binary?: boolean } = {}): void {
    for (const ws of this.#wss.clients) ws.send(data, { binary: options.binary ?? false });
  }

  /** Drops every WebRCON connection without a close frame, as a crash or a network cut would. */
  dropConnections(): void {
    for (const ws of this.#wss.clients) ws.terminate();
  }

  async close(): Promise<void> {
    this.dropConnections();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  #accept(ws: WebSocket): void {
    this.acceptedConnections += 1;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let request: ReceivedRequest;
      try {
        // ws's default binaryType ('nodebuffer') hands a text frame over as one Buffer.
        request = JSON.parse((data as Buffer).toString('utf8')) as ReceivedRequest;
      } catch {
        return;
      }
      this.received.push(request);
      if (this.hang) return;
      this.#queue = this.#queue.then(() => this.#run(ws, request)).catch(() => {});
    });
  }

  async #run(ws: WebSocket, request: ReceivedRequest): Promise<void> {
    const id = typeof request.Identifier === 'number' ? request.Identifier : 0;
    const text = typeof request.Message === 'string' ? request.Message.trim() : '';
    const [name = '', ...rest] = text.split(' ');
    const args = rest.join(' ');
    const noise = this.#options.noise ?? true;
    if (noise) {
      this.broadcast('Saving 41953 entities', 0);
      this.broadcast(
        JSON.stringify({ Channel: 0, Message: 'gg', UserId: '76561198000000009', Username: 'Someone', Color: '#5af', Time: 1 }),
        -1,
        'Chat',
      );
      // An answer to an Identifier nobody is waiting for must be ignored too.
      send(ws, id + 1_000_000, 'stray answer', 'Generic');
    }
    switch (name.toLowerCase()) {
      case 'playerlist':
      case 'global.playerlist':
        send(ws, id, JSON.stringify(this.players.map(fullPlayer), null, 2));
        break;
      case 'server.hostname':
        send(ws, id, `server.hostname: "${this.#options.hostname ?? 'Porter Test Server'}"`);
        break;
      case 'echo':
        send(ws, id, args);
        break;
      case 'say':
        // Prints nothing: Rust sends no answer with the Identifier, only the chat broadcast.
        this.broadcast(JSON.stringify({ Channel: 0, Message: args, UserId: '0', Username: 'SERVER', Color: '#eee', Time: 2 }), -1, 'Chat');
        break;
      case 'multi':
        // A plugin that logs while the command runs, then replies: two frames, one Identifier.
        send(ws, id, 'first part');
        send(ws, id, 'second part');
        break;
      case 'flood':
        await this.#flood(ws, id);
        break;
      case 'huge':
        send(ws, id, 'x'.repeat(Number(args)));
        break;
      case 'slow':
        await new Promise((resolve) => setTimeout(resolve, Number(args) || 100));
        send(ws, id, `slept ${args}`);
        break;
      default:
        send(ws, id, `ran: ${text}`);
    }
  }

  async #flood(ws: WebSocket, identifier: number): Promise<void> {
    const frame = JSON.stringify({ Message: 'x'.repeat(64 * 1024), Identifier: identifier, Type: 'Generic', Stacktrace: '' });
    while (ws.readyState === ws.OPEN) {
      this.floodedBytes += frame.length;
      // The callback fires once the frame is written: the flood goes no faster than porter reads.
      await new Promise<void>((resolve) => ws.send(frame, () => resolve()));
    }
  }
}

function send(ws: WebSocket, identifier: number, message: string, type = 'Generic'): void {
  if (ws.readyState !== ws.OPEN) return;
  ws.send(JSON.stringify({ Message: message, Identifier: identifier, Type: type, Stacktrace: '' }));
}

function fullPlayer(player: FakeRustPlayer) {
  return {
    SteamID: player.SteamID,
    OwnerSteamID: '0',
    DisplayName: player.DisplayName,
    Ping: player.Ping ?? 30,
    Address: '203.0.113.7:61234',
    ConnectedSeconds: player.ConnectedSeconds ?? 120,
    VoiationLevel: 0.0,
    CurrentLevel: 0.0,
    UnspentXp: 0.0,
    Health: 100.0,
  };
}
