import { join } from 'node:path';
import { gameConsole } from '../../game-transport.js';
import { fixSummary, makeFix } from '../fix.js';
import { addRestToken, enableRestApi, parseTshockConfig, type TshockToken } from '../formats/tshock-config.js';
import type { LoadedFile } from '../look.js';
import { option, type Probe, type ProbeContext } from '../probe.js';
import { hostPath, type ProcessHint } from '../recognise.js';
import { DEFAULT, fact, portFrom, type GameSettings } from '../settings.js';
import { decodeSettings, valueText } from '../text.js';
import type { Fix, Problem } from '../types.js';

/**
 * Terraria with TShock (format: formats/tshock-config.ts): tshock/config.json in the server's
 * folder (or the folder `-configpath` names). porter uses the REST API: `RestApiEnabled` (false by
 * default), `RestApiPort` (7878), and an application token from `ApplicationRestTokens`, the one of
 * the superadmin group if there are several.
 */
const DEFAULT_PORT = gameConsole('terraria').port;
const TOKEN_USER = 'porter';

function chooseToken(tokens: readonly TshockToken[]): TshockToken | undefined {
  return tokens.find((token) => token.group?.toLowerCase() === 'superadmin') ?? tokens[0];
}

function tokenMissing(source: string, fix: Fix | undefined): Problem {
  return {
    code: 'token-missing',
    severity: 'error',
    message: `ApplicationRestTokens is empty in ${source}: porter needs a REST token. ${fix ? 'Let porter add one' : 'Add one for a superadmin user'}, then restart the server.`,
    fix,
  };
}

function read(file: LoadedFile): GameSettings | undefined {
  const settings = decodeSettings(file.bytes);
  const json = valueText(settings, settings.text);
  const config = json === undefined ? undefined : parseTshockConfig(json);
  if (!config) return undefined;
  const source = file.shown;
  const { port, problems } = portFrom(
    config.restApiPort === undefined ? undefined : String(config.restApiPort),
    'RestApiPort',
    source,
    DEFAULT_PORT,
  );
  const token = chooseToken(config.tokens);
  const enabled = config.restApiEnabled === true;
  const fix =
    enabled && token
      ? undefined
      : makeFix({
          file: file.path,
          shownFile: source,
          summary: fixSummary(
            [!enabled && 'RestApiEnabled to true', !token && `a new REST token for user "${TOKEN_USER}" in the superadmin group`],
            source,
          ),
          setsPassword: !token,
          steps: [(text) => enableRestApi(text), (text, password) => (token ? undefined : addRestToken(text, password, TOKEN_USER))],
        });
  if (!token) problems.push(tokenMissing(source, fix));
  return {
    game: 'terraria',
    executor: gameConsole('terraria').type,
    file: file.path,
    enabled: fact(enabled, 'RestApiEnabled', config.restApiEnabled === undefined ? DEFAULT : source),
    port,
    password: token && fact(token.token, 'ApplicationRestTokens', source),
    host: undefined,
    passwordRequired: false,
    problems,
    fix,
  };
}

function candidates(dir: string, _context: ProbeContext, hint?: ProcessHint): string[] {
  const named = hint && option(hint, 'configpath');
  const folder = named && hostPath(named.value, hint.cwd ?? dir);
  return [...(folder ? [join(folder, 'config.json')] : []), join(dir, 'tshock', 'config.json')];
}

export const terrariaProbe: Probe = {
  game: 'terraria',
  programs: [{ name: /^(TShock\.Server|TerrariaServer)$/i, rootAbove: 0 }],
  candidates,
  read,
};
