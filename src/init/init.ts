import { relative, resolve } from 'node:path';
import { CredentialsError } from '../errors.js';
import type { ServerSummary } from '../api/token-check.js';
import { chooseGameServer, type GameSetup } from './game-step.js';
import { withEnvironment, type InitOptions } from './options.js';
import { InitCancelledError, type Prompter } from './prompter.js';
import { proveLogin } from './prove.js';
import { porterCommand } from './porter-command.js';
import { pickStoreServer } from './server-step.js';
import { proveToken, type ProvenToken } from './token-step.js';
import { finishSystemd, SYSTEM_UNIT_DIR, unitFile } from './systemd-step.js';
import { writeSetup } from './write-setup.js';

export interface InitDeps {
  readonly prompter: Prompter;
  readonly env: NodeJS.ProcessEnv;
  /** Each secret as soon as init holds it, so no error text can print it. */
  readonly onSecret: (secret: string) => void;
  readonly cwd: string;
}

/** The unit's LoadCredential= names (systemd/porter.service): porter reads them from $CREDENTIALS_DIRECTORY. */
const SYSTEMD_SECRETS = { token: 'api-token', password: 'rcon-password' } as const;
const PLAIN_SECRETS = { token: 'api-token', password: 'game-password' } as const;
/** The Dockerfile's PORTER_HEALTH_PORT and the port docs/operations.md scrapes; loopback, as /healthz has no authentication. */
const DEFAULT_HEALTH_LISTEN = '127.0.0.1:9464';

/**
 * `porter init`: from nothing to a proven configuration. The token is proven against the store
 * first, the store's server picked, the game server found and logged in to, and only then are
 * the files written (docs/design.md#cli-and-exit-codes).
 */
export async function runInit(given: InitOptions, deps: InitDeps): Promise<void> {
  const { prompter, env } = deps;
  const options = withEnvironment(given, env);
  const proven = await proveToken(prompter, options, env);
  deps.onSecret(proven.token);
  const store = await pickStoreServer(prompter, options.serverId, proven.servers, options.yes || !prompter.interactive);
  let game = await chooseGameServer(prompter, options, env, store.rcon);
  deps.onSecret(game.password);
  const dir = resolve(deps.cwd, options.dir ?? (options.systemd ? '/etc/porter' : 'porter'));

  for (;;) {
    const proof = await proveLogin(configFor(proven, store, game, options.systemd, true), dir);
    if (proof.kind === 'ok') {
      prompter.say('ok', `${proof.connected}; ${proof.online}`);
      break;
    }
    if (proof.kind === 'refused') {
      if (!prompter.interactive) throw new CredentialsError(`porter init: ${proof.message}`);
      prompter.say('error', proof.message);
      const password = await prompter.secret({ message: 'The password again', flag: '--rcon-password-file', env: 'PORTER_RCON_PASSWORD' });
      deps.onSecret(password);
      game = { ...game, password };
      continue;
    }
    prompter.say(
      'warn',
      `could not reach the game server at ${game.host}:${game.port}: ${proof.message}. Is it running? If its settings were just changed, restart it; porter retries until it answers.`,
    );
    if (prompter.interactive && !(await prompter.confirm({ message: 'Write the configuration anyway?', answer: true }))) {
      throw new InitCancelledError();
    }
    break;
  }

  const names = options.systemd ? SYSTEMD_SECRETS : PLAIN_SECRETS;
  const unit = options.systemd ? unitFile(dir, resolve(deps.cwd, options.unitDir ?? SYSTEM_UNIT_DIR)) : undefined;
  const configPath = await writeSetup({
    dir,
    config: configFor(proven, store, game, options.systemd, false),
    secrets: { [names.token]: proven.token, [names.password]: game.password },
    force: options.force,
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
