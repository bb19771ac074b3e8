import { relative, resolve } from 'node:path';
import { ConfigError, CredentialsError } from '../errors.js';
import { secretFileValue } from '../config/secrets.js';
import type { ServerSummary } from '../api/answers/token-check.js';
import { chooseGameServer, type GameSetup } from './game-step.js';
import { withEnvironment, type InitOptions } from './options.js';
import { InitCancelledError, type Prompter } from './prompter.js';
import { proveLogin } from './prove.js';
import { porterCommand } from './porter-command.js';
import { pickStoreServer } from './server-step.js';
import { SettingsChanges } from './settings-change.js';
import { offerRunningSim } from './sim-step.js';
import { chooseTarget } from './target-step.js';
import { proveToken, type ProvenToken } from './token-step.js';
import { finishSystemd, SYSTEM_UNIT_DIR, unitFile } from './systemd-step.js';
import { writeSetup } from './write-setup.js';

interface InitDeps {
  readonly prompter: Prompter;
  readonly env: NodeJS.ProcessEnv;
  /** Each secret as soon as init holds it, so no error text can print it. */
  readonly onSecret: (secret: string) => void;
  readonly cwd: string;
  /** What init changed in the game's files, for whoever reports a Ctrl-C outside a question. */
  readonly changes?: SettingsChanges;
}

/** The unit's LoadCredential= names (systemd/porter.service): porter reads them from $CREDENTIALS_DIRECTORY. */
const SYSTEMD_SECRETS = { token: 'api-token', password: 'rcon-password' } as const;
const PLAIN_SECRETS = { token: 'api-token', password: 'game-password' } as const;
/** The Dockerfile's PORTER_HEALTH_PORT and the port docs/operations.md scrapes; loopback, as /healthz has no authentication. */
const DEFAULT_HEALTH_LISTEN = '127.0.0.1:9464';

/**
 * `porter init`: from nothing to a proven configuration. Where it will write is settled first
 * (files from an earlier run found before anything is asked); the token is proven against the
 * store, the store's server picked, the game server found and logged in to, and only then are
 * the files written (docs/design.md#cli-and-exit-codes). Stopped at any point, it says what it
 * changed in the game's files and where the backups are.
 */
export async function runInit(given: InitOptions, deps: InitDeps): Promise<void> {
  const changes = deps.changes ?? new SettingsChanges();
  try {
    await initSteps(given, deps, changes);
  } catch (error) {
    if (error instanceof InitCancelledError) throw new InitCancelledError(changes.describe());
    throw error;
  }
}

async function initSteps(given: InitOptions, deps: InitDeps, changes: SettingsChanges): Promise<void> {
  const { prompter, env } = deps;
  const options = withEnvironment(given, env);
  const names = options.systemd ? SYSTEMD_SECRETS : PLAIN_SECRETS;
  const target = await chooseTarget(
    prompter,
    { dir: resolve(deps.cwd, options.dir ?? (options.systemd ? '/etc/porter' : 'porter')), force: options.force, cwd: deps.cwd },
    ['config.json', names.token, names.password],
    (dir) => (options.systemd ? [unitFile(dir, resolve(deps.cwd, options.unitDir ?? SYSTEM_UNIT_DIR))] : []),
  );
  const dir = target.dir;
  const proven = await proveToken(prompter, options, env, await offerRunningSim(prompter, options, env));
  deps.onSecret(proven.token);
  const store = await pickStoreServer(prompter, options.serverId, proven.servers, options.yes || !prompter.interactive);
  let game = await chooseGameServer(prompter, options, env, store.rcon, changes);
  deps.onSecret(game.password);
  storable(game.password, 'password');

  for (;;) {
    const proof = await proveLogin(configFor(proven, store, game, options.systemd, true), dir);
    if (proof.kind === 'ok') {
      prompter.say('ok', `${proof.connected}; ${proof.online}`);
      break;
    }
    const where = `${game.host}:${game.port}`;
    // A game server running since before init changed its settings still has RCON off, or the old password.
    if (proof.kind === 'refused' && game.changed === undefined) {
      const refused = `the game server at ${where} refused the password`;
      if (!prompter.interactive) {
        throw new CredentialsError(`porter init: ${refused}: pass its password with --rcon-password-file (or PORTER_RCON_PASSWORD)`);
      }
      prompter.say('error', `${refused}: type the one in its settings`);
      const password = await prompter.secret({ message: 'The password again', flag: '--rcon-password-file', env: 'PORTER_RCON_PASSWORD' });
      deps.onSecret(password);
      storable(password, 'password');
      game = { ...game, password };
      continue;
    }
    const what = proof.kind === 'refused' ? 'refused the login' : `did not answer (${proof.reason})`;
    prompter.say(
      'warn',
      game.changed !== undefined
        ? `the game server at ${where} ${what}. It reads ${game.changed.shownFile} only when it starts: restart the game server now`
        : `the game server at ${where} ${what}. Is it running, and is ${game.port} its ${game.transport.type} port?`,
    );
    if (!prompter.interactive) {
      prompter.say('info', 'the configuration is written without a proven login: porter check proves it once the game server answers');
      break;
    }
    const next = await prompter.select<'retry' | 'write'>({
      message: game.changed !== undefined ? 'Once it has restarted:' : 'Then:',
      flag: '--yes',
      choices: [
        { value: 'retry', label: 'Try the login again' },
        { value: 'write', label: 'Write the configuration without a proven login', hint: 'porter check proves it later' },
      ],
    });
    if (next === 'write') break;
  }

  const unit = options.systemd ? unitFile(dir, resolve(deps.cwd, options.unitDir ?? SYSTEM_UNIT_DIR)) : undefined;
  const configPath = await writeSetup({
    dir,
    config: configFor(proven, store, game, options.systemd, false),
    secrets: { [names.token]: proven.token, [names.password]: game.password },
    force: target.replace,
    readableConfig: options.systemd,
    others: unit ? [unit] : [],
  });
  if (unit) {
    prompter.say(
      'ok',
      `wrote ${configPath} (no secrets in it, readable by the service's user), the secrets beside it (${names.token}, ${names.password}, readable by root only: systemd hands them to the service) and ${unit.path}`,
    );
    await finishSystemd(prompter, unit.path);
    return;
  }
  prompter.say('ok', `wrote ${configPath} and the secrets beside it (${names.token}, ${names.password}), readable by their owner only`);
  prompter.say('info', nextSteps(configPath, deps.cwd, env));
}

/**
 * A secret init is about to write into a file porter reads back trimmed: one that begins or ends
 * with a blank would not be the secret proven. Refused here, with what to do.
 */
function storable(secret: string, what: 'password'): void {
  if (secretFileValue(`${secret}\n`) === secret) return;
  throw new ConfigError(
    `porter init: the game server's ${what} begins or ends with a blank (a space, a tab or a line break), which porter's password file cannot keep: ` +
      "change it in the game's settings to one without, then run porter init again",
  );
}

function configFor(proven: ProvenToken, store: ServerSummary, game: GameSetup, systemd: boolean, inline: boolean): unknown {
  const secretsFrom = (inlineValue: object, file: object) => (inline ? inlineValue : systemd ? {} : file);
  return {
    api: { baseUrl: proven.baseUrl, ...secretsFrom({ token: proven.token }, { tokenFile: `./${PLAIN_SECRETS.token}` }) },
    servers: [
      {
        id: store.id,
        ...(store.name !== undefined && { name: store.name }),
        executor: {
          type: game.transport.type,
          host: game.host,
          port: game.port,
          ...secretsFrom({ password: game.password }, { passwordFile: `./${PLAIN_SECRETS.password}` }),
        },
        players: { preset: game.game },
      },
    ],
    stateDir: systemd ? '/var/lib/porter' : './state',
    // /healthz and /metrics from the first start: the container's HEALTHCHECK asks this port.
    health: { listen: DEFAULT_HEALTH_LISTEN },
  };
}

function nextSteps(configPath: string, cwd: string, env: NodeJS.ProcessEnv): string {
  const near = relative(cwd, configPath);
  const shown = near === '' || near.startsWith('..') ? configPath : near;
  const porter = porterCommand(env, cwd);
  return ['Next:', `  ${porter} check -c ${shown}`, `  ${porter} run -c ${shown}`].join('\n');
}
