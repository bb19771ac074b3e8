import type { Game } from './game.js';
import { unexpectedAnswer } from './errors.js';
import { defineGame } from './record.js';

/**
 * Rust WebRCON `playerlist`: the reply's `Message` is itself a JSON string holding an array of
 * `{ SteamID, DisplayName, … }`. Accepts that inner text, or the whole reply envelope.
 * SteamIDs are kept as the strings Rust sends: as numbers they would lose digits.
 */
export function parseRustPlayerList(answer: string): string[] | null {
  let value: unknown;
  try {
    value = JSON.parse(answer);
    if (isEnvelope(value)) value = JSON.parse(value.Message);
  } catch {
    return null;
  }
  if (!Array.isArray(value)) return null;
  const ids: string[] = [];
  for (const entry of value) {
    const steamId = (entry as { SteamID?: unknown } | null)?.SteamID;
    if (typeof steamId === 'string' && /^\d+$/.test(steamId)) ids.push(steamId);
  }
  return ids;
}

function isEnvelope(value: unknown): value is { Message: string } {
  return typeof value === 'object' && value !== null && typeof (value as { Message?: unknown }).Message === 'string';
}

/**
 * quit / restart stop the server; ownerid / moderatorid hand out admin; server.writecfg would
 * persist that. Rust accepts the short and the global.-prefixed spelling of each.
 */
const RUST_DEFAULT_DENY: readonly string[] = [
  'quit',
  'global.quit',
  'restart',
  'global.restart',
  'ownerid',
  'global.ownerid',
  'moderatorid',
  'global.moderatorid',
  'server.writecfg',
];

export const rustGame: Game = {
  name: 'rust',
  identifier: 'SteamID64',
  splitsOnSemicolon: false,
  failurePatterns: [],
  defaultDeny: RUST_DEFAULT_DENY,
  async readPlayers(query) {
    const answer = await query('playerlist');
    const ids = parseRustPlayerList(answer);
    if (!ids) throw unexpectedAnswer('rust', 'playerlist', 'a JSON array of players', answer);
    return ids;
  },
};

export const rustRecord = defineGame({
  id: 'rust',
  docsTitle: 'Rust',
  console: { transport: 'webrcon', port: 28016, title: 'Rust' },
  forServer: () => rustGame,
});
