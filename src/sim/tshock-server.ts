import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isReadOnlyTShockCommand, runTShockCommand, type Terrarian } from './consoles/terraria.js';
import { unescapeDataString } from './tshock-query.js';
import { SimListener, type SimPlace } from './sim-listener.js';

/**
 * A fake TShock REST API (Terraria) on 127.0.0.1 for `porter demo`, `porter sim` and the tests
 * (which play faults on it through src/sim/faults/tshock-server.ts), copying
 * TShockAPI/Rest (Rest.cs, SecureRest.cs, RestManager.cs, RestObject.cs):
 * - every answer is an indented JSON object with `status` ("200", "400", …) and the HTTP status
 *   set to it, `Content-Type: application/json; charset=utf-8`, and `Connection: close`;
 * - routes match the path without trailing slashes, in any case, by any method; an unknown one
 *   answers 404 "Specified API endpoint doesn't exist. …";
 * - the token is the `token` query parameter: none is 401 "Not authorized. The specified API
 *   endpoint requires a token.", a wrong one 403 "… but the provided token was not valid.", a
 *   group without `tshock.rest.command` 403 "Not authorized. User "x" has no access to use the
 *   specified API endpoint." on rawcmd;
 * - query values are URL-decoded once by the HTTP server (HttpUtility.UrlDecode: `+` is a space),
 *   the last of repeated names wins, and `cmd` is decoded once more (Uri.UnescapeDataString);
 * - `/tokentest`, `/v2/players/list` (nickname, username, group, active, state, team) and
 *   `/v3/server/rawcmd` (`response`: the lines the command printed; an empty `cmd` is 400
 *   "Missing or empty cmd parameter").
 * Application tokens are not rate-limited in TShock (only `/v2/token/create` logins are), so
 * neither are they here.
 */

export interface TShockServerOptions extends SimPlace {
  /** The one application token (group superadmin) the server accepts. */
  readonly token: string;
  /** Who is on at start: names, or whole entries. */
  readonly players?: ReadonlyArray<string | SimTerrarianInput>;
  readonly maxPlayers?: number;
}

export interface SimTerrarianInput {
  readonly nickname: string;
  /** The TShock account; "" or absent: not logged in. */
  readonly username?: string;
  readonly group?: string;
  /** False: still connecting (listed, but not in the game yet). */
  readonly active?: boolean;
}

export interface TShockExecuted {
  /** The command as TShock received it, specifier included (`/give …`). */
  readonly command: string;
  readonly at: number;
  /** A read-only command (`/who`): skip it when counting deliveries. */
  readonly query: boolean;
}

/** What TShock's REST answers: an object with its HTTP status in `status`. */
export type RestObject = Record<string, unknown> & { status: string };

/** One rawcmd past the token and permission checks, as the server serves it (src/sim/faults/ serves some otherwise). */
export interface RawCommandExchange {
  readonly command: string;
  /** A read-only command (`/who`). */
  readonly query: boolean;
  readonly response: ServerResponse;
  /** Runs the command: records it in `executed`, and returns the lines it printed. */
  run(): string[];
  /** Answers with `object`, its `status` the HTTP status. */
  answer(object: RestObject): Promise<void>;
}

export interface FakeTShockServer {
  readonly host: string;
  readonly port: number;
  /** `http://host:port`. */
  readonly url: string;
  /** Every rawcmd the server ran, in order (read-only ones flagged). */
  readonly executed: TShockExecuted[];
  /** HTTP requests received since start, of any kind. */
  readonly requests: number;
  /** Requests refused for a missing or wrong token. */
  readonly authFailures: number;
  /** `/v2/players/list` requests answered. */
  readonly playerListReads: number;
  /** Most requests ever open at once. */
  readonly maxConcurrent: number;
  /** Nicknames of the active players. */
  online(): string[];
  setOnline(players: ReadonlyArray<string | SimTerrarianInput>): void;
  join(player: string | SimTerrarianInput): void;
  leave(nickname: string): void;
  setToken(token: string): void;
  /** The token's group loses (false) or regains (true) tshock.rest.command. */
  setRawCommandPermission(allowed: boolean): void;
  /** Stops listening and drops every connection, keeping state: the game server is down. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTShockServer(options: TShockServerOptions): Promise<FakeTShockServer> {
  const server = new TShockServer(options);
  await server.up();
  return server;
}

/** The application token's user, as ApplicationRestTokens names it. */
const TOKEN_USER = 'porter';

/** What TShock's HTTP server calls itself (`Server: <assembly>/<version>`). */
const SERVER_HEADER = 'TShockAPI/5.2.0.0';

/** The server. `serve` and `write` are the seams src/sim/faults/tshock-server.ts overrides to play faults and delays. */
export class TShockServer extends SimListener<TShockServerOptions> implements FakeTShockServer {
  readonly executed: TShockExecuted[] = [];
  #players: Terrarian[] = [];
  #token: string;
  #rawCommandAllowed = true;
  #open = 0;
  requests = 0;
  playerListReads = 0;
  maxConcurrent = 0;

  constructor(options: TShockServerOptions) {
    super(options, 'fake TShock server');
    this.#token = options.token;
    this.setOnline(options.players ?? []);
  }

  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  online(): string[] {
    return this.#players.filter((player) => player.active).map((player) => player.nickname);
  }

  setOnline(players: ReadonlyArray<string | SimTerrarianInput>): void {
    this.#players = [];
    for (const player of players) this.join(player);
  }

  join(player: string | SimTerrarianInput): void {
    const input = typeof player === 'string' ? { nickname: player } : player;
    // One slot per character name here, so that a test's join and leave name one player.
    if (this.#players.some((online) => online.nickname === input.nickname)) return;
    this.#players.push({
      nickname: input.nickname,
      username: input.username ?? '',
      group: input.group ?? (input.username ? 'default' : 'guest'),
      active: input.active ?? true,
    });
  }

  leave(nickname: string): void {
    this.#players = this.#players.filter((player) => player.nickname !== nickname);
  }

  setToken(token: string): void {
    this.#token = token;
  }

  setRawCommandPermission(allowed: boolean): void {
    this.#rawCommandAllowed = allowed;
  }

  protected newServer(): Server {
    const server = createServer((request, response) => void this.#handle(request, response));
    server.on('connection', (socket) => this.keep(socket));
    return server;
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    this.requests += 1;
    this.#open += 1;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.#open);
    response.on('close', () => (this.#open -= 1));
    const url = new URL(request.url ?? '/', 'http://tshock.invalid');
    const params = new Map<string, string>();
    // URLSearchParams decodes as HttpUtility.UrlDecode does; set() keeps the last of repeated names.
    for (const [name, value] of url.searchParams) params.set(name, value);
    const route = url.pathname.replace(/\/+$/, '').toLowerCase();

    if (route === '/tokentest') return this.#answer(response, this.#checkToken(params) ?? tokenTest());
    if (route === '/v2/players/list') {
      const refused = this.#checkToken(params);
      if (refused) return this.#answer(response, refused);
      this.playerListReads += 1;
      return this.#answer(response, { status: '200', players: this.#players.map(listEntry) });
    }
    if (route === '/v3/server/rawcmd') return this.#rawCommand(params, response);
    return this.#answer(response, {
      status: '404',
      error: "Specified API endpoint doesn't exist. Refer to the documentation for a list of valid endpoints.",
    });
  }

  /** SecureRest.ExecuteCommand's token check; undefined when the token is good. */
  #checkToken(params: Map<string, string>): RestObject | undefined {
    const token = params.get('token');
    if (token === undefined) {
      this.authFailures += 1;
      return { status: '401', error: 'Not authorized. The specified API endpoint requires a token.' };
    }
    if (token !== this.#token) {
      this.authFailures += 1;
      return { status: '403', error: 'Not authorized. The specified API endpoint requires a token, but the provided token was not valid.' };
    }
    return undefined;
  }

  async #rawCommand(params: Map<string, string>, response: ServerResponse): Promise<void> {
    const refused = this.#checkToken(params);
    if (refused) return this.#answer(response, refused);
    if (!this.#rawCommandAllowed) {
      return this.#answer(response, {
        status: '403',
        error: `Not authorized. User "${TOKEN_USER}" has no access to use the specified API endpoint.`,
      });
    }
    const raw = params.get('cmd');
    const command = raw === undefined ? undefined : unescapeDataString(raw);
    if (command === undefined || command.trim() === '')
      return this.#answer(response, { status: '400', error: 'Missing or empty cmd parameter' });
    const query = isReadOnlyTShockCommand(command);
    return this.serve({
      command,
      query,
      response,
      run: () => {
        this.executed.push({ command, at: this.now(), query });
        this.options.logger?.debug({ event: 'fake.command', command }, 'fake TShock server ran a command');
        return runTShockCommand(command, { players: this.#players, maxPlayers: this.options.maxPlayers ?? 8 });
      },
      answer: (object) => this.#answer(response, object),
    });
  }

  /** Serves a rawcmd: runs it and answers with the lines it printed. */
  async serve(exchange: RawCommandExchange): Promise<void> {
    return exchange.answer({ status: '200', response: exchange.run() });
  }

  async #answer(response: ServerResponse, object: RestObject): Promise<void> {
    // Rest.OnRequest: HTTP status from the object's status when it parses as one, else 200.
    const status = /^\d{3}$/.test(object.status) ? Number(object.status) : 200;
    await this.write(response, status, restJson(object));
  }

  /** Writes an answer with TShock's headers: every answer goes out here. */
  write(response: ServerResponse, status: number, body: string): Promise<void> {
    if (!response.destroyed) {
      response.writeHead(status, restHeaders(Buffer.byteLength(body)));
      response.end(body);
    }
    return Promise.resolve();
  }
}

/** The headers of TShock's answers, for a body of `length` bytes. */
export function restHeaders(length: number): Record<string, string | number> {
  return { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': length, Server: SERVER_HEADER, Connection: 'close' };
}

/** Newtonsoft's Formatting.Indented: two spaces. */
export function restJson(object: RestObject): string {
  return JSON.stringify(object, null, 2);
}

function tokenTest(): RestObject {
  return { status: '200', response: 'Token is valid and was passed through correctly.', associateduser: TOKEN_USER };
}

/** RestManager.PlayerFilter without the ip (the token's group would need tshock.rest.viewips). */
function listEntry(player: Terrarian): Record<string, unknown> {
  // State 10 is a client in the game; a connecting one is still on the way there.
  return {
    nickname: player.nickname,
    username: player.username,
    group: player.group,
    active: player.active,
    state: player.active ? 10 : 2,
    team: 0,
  };
}
