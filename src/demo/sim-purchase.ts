/**
 * A purchase made in the simulated store: the product's command (the store owner's template, where
 * `{player}` stands for the buyer's name) and the name the buyer typed. The name is data: it is put
 * in place of `{player}` as it is, never read as a pattern, and a name that could end the command
 * and start another (a line break, any control character) is refused, as a store refuses it at
 * checkout. What is left of the template is porter's business: its command policy refuses a second
 * command there (docs/design.md#command-safety).
 */

export const PLAYER_PLACEHOLDER = '{player}';
const MAX_PLAYER = 64;
const MAX_COMMAND = 4096;

export interface PurchaseRequest {
  readonly command: string;
  readonly player?: string | undefined;
  /** Run it even when the player is not online. Default: only when no player is named. */
  readonly offline?: boolean | undefined;
}

interface Purchase {
  readonly command: string;
  readonly player: string | undefined;
  readonly offlineExecute: boolean;
}

/** The purchase, or why it cannot be made (a sentence that names what to change). */
export function purchaseFrom(request: PurchaseRequest): Purchase | { readonly refused: string } {
  const { command, player } = request;
  if (command.trim() === '') return { refused: 'the command is empty: give the product\'s command, e.g. "give {player} diamond 1"' };
  if (command.length > MAX_COMMAND) return { refused: `the command is longer than ${MAX_COMMAND} characters` };
  if (player === undefined) {
    if (command.includes(PLAYER_PLACEHOLDER)) return { refused: 'the command has {player}: name the buyer with --player (or "player")' };
    return { command, player: undefined, offlineExecute: true };
  }
  if (player.trim() === '') return { refused: 'the player name is empty' };
  if (player.length > MAX_PLAYER) return { refused: `the player name is longer than ${MAX_PLAYER} characters` };
  // \p{Cc}: CR, LF, NUL, tab and the rest, any of which could end the command and start another.
  if (/\p{Cc}/u.test(player))
    return { refused: 'the player name has a line break or another control character; a store refuses such a name' };
  return {
    // split/join: the name is put in as it is ("$&" in a name stays "$&", as replace() would not keep it).
    command: command.split(PLAYER_PLACEHOLDER).join(player),
    player,
    offlineExecute: request.offline ?? false,
  };
}
