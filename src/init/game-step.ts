import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { transportOf } from '../protocols/transport-registry.js';
import { detectGameServers } from './detect/detect.js';
import { generatePassword } from './detect/password.js';
import type { Detection, Fix } from './detect/types.js';
import { GAME_TRANSPORTS, INIT_GAMES, type Transport } from './game-transport.js';
import type { InitOptions } from './options.js';
import type { Prompter } from './prompter.js';
import { applyFix, describeChange, type SettingsChange, type SettingsChanges } from './settings-change.js';

export interface GameSetup {
  readonly game: string;
  readonly transport: Transport;
  readonly host: string;
  readonly port: number;
  readonly password: string;
  /** What detection found, for the summary. */
  readonly detection: Detection | undefined;
  /** The edit init made to the game's settings: the running game server reads it only when restarted. */
  readonly changed: SettingsChange | undefined;
}

/**
 * The game server: detected from the folder and the running processes, shown with where each
 * value came from, its settings file fixed when the owner agrees, and every value still missing
 * asked (or, without a terminal, taken from flags: `--yes` accepts what was detected).
 */
export async function chooseGameServer(
  prompter: Prompter,
  options: InitOptions,
  env: NodeJS.ProcessEnv,
  storeRcon: { readonly host: string; readonly port: number } | undefined,
  changes: SettingsChanges,
): Promise<GameSetup> {
  if (options.game !== undefined && !(options.game in GAME_TRANSPORTS)) {
    throw new ConfigError(`--game ${options.game} is not a game porter init knows: use one of ${INIT_GAMES.join(', ')}`);
  }
  const dir = resolve(options.gameDir ?? process.cwd());
  const report = detectGameServers({ dir, env });
  const found = report.detections.filter((detection) => options.game === undefined || detection.game === options.game);
  const detection = await pickDetection(prompter, found, options);
  if (!detection) {
    prompter.say('info', `no game server settings found in ${dir} or in the running processes`);
    for (const note of report.notes.slice(0, 5)) prompter.say('info', `  ${note.path}: ${note.message}`);
  }

  const review = detection ? await reviewDetection(prompter, detection, options, changes) : { accepted: false };
  const use = review.accepted ? detection : undefined;

  const game =
    options.game ??
    use?.game ??
    (await prompter.select({
      message: 'Which game does this server run?',
      flag: '--game',
      env: 'PORTER_GAME',
      choices: INIT_GAMES.map((name) => ({ value: name, label: GAME_TRANSPORTS[name]!.title, hint: name })),
    }));
  const transport = GAME_TRANSPORTS[game]!;
  const { host, port } = await askAddress(prompter, options, transport, { use, detection, storeRcon });
  const password =
    (options.rconPasswordFile !== undefined ? await readSecretOption(options.rconPasswordFile) : undefined) ??
    (env.PORTER_RCON_PASSWORD || undefined) ??
    review.fixedPassword ??
    use?.password?.reveal() ??
    (await prompter.secret({
      message: transportOf(transport.type).console.secretLabel,
      flag: '--rcon-password-file',
      env: 'PORTER_RCON_PASSWORD',
    }));
  return { game, transport, host, port, password, detection, changed: review.changed };
}

interface Review {
  /** The owner took the detected settings (or --yes did). */
  readonly accepted: boolean;
  /** The last edit init made to the settings file. */
  readonly changed?: SettingsChange;
  /** The password an edit set. */
  readonly fixedPassword?: string;
}

/** Shows what was detected and where from, offers each fix once, and asks whether to use it. */
async function reviewDetection(prompter: Prompter, detection: Detection, options: InitOptions, changes: SettingsChanges): Promise<Review> {
  const transport = GAME_TRANSPORTS[detection.game];
  prompter.say(
    'info',
    [
      `found ${transport?.title ?? detection.game}: ${detection.executor.type} ${detection.executor.host}:${detection.executor.port}`,
      ...detection.found.map((line) => `  ${line.setting} ${line.shown}, from ${line.source}`),
    ].join('\n'),
  );
  let fixedPassword: string | undefined;
  let changed: SettingsChange | undefined;
  // One fix may answer several problems (RCON off and no password): it is offered once.
  const offered = new Set<Fix>();
  const applied = new Set<Fix>();
  for (const problem of detection.problems) {
    // Answered by an edit already made: saying it again ("rcon.password is empty") would be stale.
    if (problem.fix && applied.has(problem.fix)) continue;
    prompter.say(problem.severity === 'error' ? 'error' : 'warn', problem.message);
    if (problem.fix && !offered.has(problem.fix)) {
      offered.add(problem.fix);
      const made = await offerFix(prompter, problem.fix, options);
      if (made) {
        applied.add(problem.fix);
        changes.add(made.change);
        changed = made.change;
        fixedPassword = made.password ?? fixedPassword;
      }
    }
  }
  const accepted = options.yes || (prompter.interactive && (await prompter.confirm({ message: 'Use these settings?', answer: true })));
  return { accepted, ...(changed && { changed }), ...(fixedPassword !== undefined && { fixedPassword }) };
}

/** The game server's address: from flags, the accepted detection, or asked with the best guess offered. */
async function askAddress(
  prompter: Prompter,
  options: InitOptions,
  transport: Transport,
  known: {
    readonly use: Detection | undefined;
    readonly detection: Detection | undefined;
    readonly storeRcon: { readonly host: string; readonly port: number } | undefined;
  },
): Promise<{ host: string; port: number }> {
  const { use, detection, storeRcon } = known;
  const host =
    options.rconHost ??
    use?.executor.host ??
    (await prompter.text({
      message: `${transport.type} host of the game server`,
      flag: '--rcon-host',
      env: 'PORTER_RCON_HOST',
      initial: detection?.executor.host ?? storeRcon?.host ?? '127.0.0.1',
    }));
  const port =
    options.rconPort ??
    use?.executor.port ??
    Number(
      await prompter.text({
        message: `${transport.type} port`,
        flag: '--rcon-port',
        env: 'PORTER_RCON_PORT',
        initial: String(detection?.executor.port ?? storeRcon?.port ?? transport.port),
        validate: (value) => (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 65535 ? undefined : 'a port: 1 to 65535'),
      }),
    );
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError(`--rcon-port ${port}: expected a port, 1 to 65535`);
  return { host, port };
}

async function pickDetection(prompter: Prompter, found: readonly Detection[], options: InitOptions): Promise<Detection | undefined> {
  if (found.length <= 1 || options.yes) return found[0];
  return prompter.select({
    message: `${found.length} game servers found: which one is this store server?`,
    flag: '--game or --yes (the first one found)',
    choices: found.map((detection) => ({
      value: detection,
      label: `${GAME_TRANSPORTS[detection.game]?.title ?? detection.game} ${detection.executor.host}:${detection.executor.port}`,
      hint: detection.settingsFile ?? (detection.process ? `process ${detection.process.name} (${detection.process.pid})` : ''),
    })),
  });
}

/**
 * Applies a fix to the game's settings file when the owner agrees, the file backed up first;
 * returns what changed and the password it set.
 */
async function offerFix(
  prompter: Prompter,
  fix: Fix,
  options: InitOptions,
): Promise<{ change: SettingsChange; password: string | undefined } | undefined> {
  // The summary names the file already: "set enable-rcon=true and a new rcon.password in ./server.properties".
  const apply = await prompter.confirm({
    message: `${fix.summary[0]!.toUpperCase()}${fix.summary.slice(1)}?`,
    answer: options.fixGameSettings,
  });
  if (!apply) return undefined;
  const password = generatePassword();
  const change = await applyFix(fix, password);
  prompter.say('ok', `${describeChange(change)}. Restart the game server so that it reads the change`);
  return { change, password: fix.setsPassword ? password : undefined };
}

async function readSecretOption(path: string): Promise<string> {
  let text: string;
  try {
    text = (await readFile(path, 'utf8')).trim();
  } catch (error) {
    throw new ConfigError(
      `--rcon-password-file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): check the path`,
    );
  }
  if (text === '') throw new ConfigError(`--rcon-password-file ${path} is empty: write the password into it`);
  return text;
}
