import type { BattlEyeCommandHandler } from '../sim/battleye-server.js';

/**
 * For `porter demo --game dayz`: vanilla DayZ has no RCon command that gives an item, so stores
 * deliver through a server-side mod. This stands in for such a mod, and is not part of DayZ:
 * `shop give "<player>" <item> [count]` answers `Gave <count> <item> to <player>`, or
 * `Player <player> is not on the server`, a failure only because the demo's config says so in
 * `failurePatterns`, as a store owner would for their mod's answers.
 */
export const demoStoreMod: BattlEyeCommandHandler = (command, roster) => {
  const match = /^shop give "([^"]+)" (\S+)(?: (\d+))?$/.exec(command.trim());
  if (!match) return undefined;
  const [, player, item, count = '1'] = match as unknown as [string, string, string, string | undefined];
  const seat = roster.find(player);
  return seat ? `Gave ${count} ${item} to ${seat.name}` : `Player ${player} is not on the server`;
};
