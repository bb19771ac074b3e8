import { join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import { findIni, parseIni } from '../formats/ini.js';
import { bareSettings, overlay, type Overrides, type ProbeContext } from '../probe.js';
import { DEFAULT, fact, parsePort, type Fact, type GameSettings } from '../settings.js';
import { decodeSettings, valueText } from '../text.js';
import type { Problem } from '../types.js';

/**
 * The itzg/minecraft-server container, from its scripts/start-configuration: ENABLE_RCON defaults
 * to true and RCON_PORT to 25575; the password is RCON_PASSWORD, else the content of
 * RCON_PASSWORD_FILE (`$(cat …)`, so without trailing line breaks), else `openssl rand -hex 12`
 * made anew at every start. It is written to /data/.rcon-cli.env as `password=<value>`, a file
 * removed when RCON is off; scripts/start-setupServerProperties writes RCON_PASSWORD into
 * server.properties as rcon.password. The variables seen here are porter's own environment: a
 * Compose file that gives both containers the same RCON_PASSWORD, or porter running inside the
 * container.
 */
const CLI_ENV = '.rcon-cli.env';
const FROM_ENV = 'the environment';

function environmentFacts(context: ProbeContext): Overrides {
  const env = context.env;
  const port = env.RCON_PORT === undefined ? undefined : parsePort(env.RCON_PORT);
  // The image's isTrue (scripts/start-utils): "true" or "on", in any case; anything else is off.
  const enabled = env.ENABLE_RCON === undefined ? undefined : /^(true|on)$/i.test(env.ENABLE_RCON);
  return {
    enabled: enabled === undefined ? undefined : fact(enabled, 'ENABLE_RCON', FROM_ENV),
    port: port === undefined ? undefined : fact(port, 'RCON_PORT', FROM_ENV),
    password: environmentPassword(context),
  };
}

function environmentPassword(context: ProbeContext): Fact<string> | undefined {
  const { env, look } = context;
  if (env.RCON_PASSWORD !== undefined) return fact(env.RCON_PASSWORD, 'RCON_PASSWORD', FROM_ENV);
  if (!env.RCON_PASSWORD_FILE) return undefined;
  const file = look.read(env.RCON_PASSWORD_FILE);
  if (!file) return undefined;
  const settings = decodeSettings(file.bytes);
  const password = valueText(settings, settings.text.replace(/\n+$/, ''));
  return password === undefined ? undefined : fact(password, 'RCON_PASSWORD_FILE', file.shown);
}

function cliEnvPassword(folder: string, context: ProbeContext): Fact<string> | undefined {
  if (!context.look.has(folder, CLI_ENV)) return undefined;
  const file = context.look.read(join(folder, CLI_ENV));
  if (!file) return undefined;
  const settings = decodeSettings(file.bytes);
  const entry = findIni(parseIni(settings.text, { comments: ['#'] }), undefined, 'password', 'last');
  const password = entry && valueText(settings, entry.value);
  return password === undefined ? undefined : fact(password, 'password', file.shown);
}

function regeneratedPassword(where: string): Problem {
  return {
    code: 'password-changes-on-restart',
    severity: 'warning',
    message:
      `This is an itzg/minecraft-server data folder: unless RCON_PASSWORD (or RCON_PASSWORD_FILE) is set for the container, ` +
      `it makes a new RCON password at every start, and the one found in ${where} stops working at the next restart. ` +
      `Set RCON_PASSWORD in the container's environment and give porter the same password.`,
  };
}

function mismatch(properties: string, cliEnv: string): Problem {
  return {
    code: 'password-mismatch',
    severity: 'warning',
    message: `The RCON passwords in ${properties} and ${cliEnv} differ; the server reads ${properties} when it starts, so porter uses that one. Restart the container if it was changed since.`,
  };
}

/**
 * A server.properties seen through the container that manages it, when `folder` is its data
 * folder (it holds .rcon-cli.env). The server itself reads server.properties, so its password
 * counts; .rcon-cli.env stands in when server.properties has none.
 */
export function withItzg(settings: GameSettings, folder: string, context: ProbeContext): GameSettings {
  const cliPassword = cliEnvPassword(folder, context);
  if (!cliPassword) return settings;
  const own = settings.password;
  const password = own?.value ? own : cliPassword;
  const problems: Problem[] = [];
  if (own?.value && own.value !== cliPassword.value) problems.push(mismatch(own.source, cliPassword.source));
  if (context.env.RCON_PASSWORD === undefined && !context.env.RCON_PASSWORD_FILE) problems.push(regeneratedPassword(password.source));
  // The container rewrites server.properties from its variables: an edit there would be undone.
  return overlay({ ...settings, fix: undefined }, { password, problems });
}

/** A server known only from the environment (RCON_PASSWORD and friends), when no server.properties was found. */
export function itzgFromEnvironment(context: ProbeContext): GameSettings | undefined {
  const fromEnv = environmentFacts(context);
  if (!fromEnv.password) return undefined;
  return overlay(bareSettings('minecraft', fact(gameConsole('minecraft').port, 'RCON_PORT', DEFAULT)), fromEnv);
}
