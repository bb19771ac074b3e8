import { ConfigError } from '../errors.js';

/**
 * The answers `porter init` can be given up front, from flags or (same meaning) environment
 * variables; flags win. Whatever is still missing is asked on a terminal.
 */
export interface InitOptions {
  readonly apiUrl?: string | undefined;
  /** A file holding the API token; the token itself may come from PORTER_API_TOKEN. */
  readonly tokenFile?: string | undefined;
  readonly serverId?: string | undefined;
  readonly game?: string | undefined;
  readonly gameDir?: string | undefined;
  readonly rconHost?: string | undefined;
  readonly rconPort?: number | undefined;
  /** A file holding the game server's password; the password itself may come from PORTER_RCON_PASSWORD. */
  readonly rconPasswordFile?: string | undefined;
  /** Where the config and secret files go (default ./porter, or /etc/porter with --systemd). */
  readonly dir?: string | undefined;
  /** Use what was detected without asking. */
  readonly yes: boolean;
  /** Apply the offered edits to the game's settings file (switch RCON on, set a password) without asking. */
  readonly fixGameSettings: boolean;
  readonly force: boolean;
  /** Lay the files out for systemd/porter.service: credentials in /etc/porter, state in /var/lib/porter. */
  readonly systemd: boolean;
  /** With --systemd: where the unit goes (default /etc/systemd/system, where systemd reads it). */
  readonly unitDir?: string | undefined;
}

/** Each option's environment variable, for options given neither as a flag nor asked. */
const OPTION_ENV = {
  apiUrl: 'PORTER_API_URL',
  serverId: 'PORTER_SERVER_ID',
  game: 'PORTER_GAME',
  gameDir: 'PORTER_GAME_DIR',
  rconHost: 'PORTER_RCON_HOST',
  rconPort: 'PORTER_RCON_PORT',
  dir: 'PORTER_INIT_DIR',
} as const;

/** Fills what the flags left open from the environment. */
export function withEnvironment(options: InitOptions, env: NodeJS.ProcessEnv): InitOptions {
  const from = (name: string) => (env[name] !== undefined && env[name] !== '' ? env[name] : undefined);
  const port = from(OPTION_ENV.rconPort);
  if (options.rconPort === undefined && port !== undefined && !/^\d+$/.test(port)) {
    throw new ConfigError(`${OPTION_ENV.rconPort}=${port}: expected a port, 1 to 65535`);
  }
  return {
    ...options,
    apiUrl: options.apiUrl ?? from(OPTION_ENV.apiUrl),
    serverId: options.serverId ?? from(OPTION_ENV.serverId),
    game: options.game ?? from(OPTION_ENV.game),
    gameDir: options.gameDir ?? from(OPTION_ENV.gameDir),
    rconHost: options.rconHost ?? from(OPTION_ENV.rconHost),
    rconPort: options.rconPort ?? (port !== undefined ? Number(port) : undefined),
    dir: options.dir ?? from(OPTION_ENV.dir),
  };
}
