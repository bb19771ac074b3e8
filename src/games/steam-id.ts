/**
 * Steam account ids come in three spellings; stores match on SteamID64, so the Source presets
 * convert. BigInt because SteamID64 values are above 2^53.
 */
const STEAM64_BASE = 76561197960265728n;

/** STEAM_X:Y:Z, [U:1:W] or a bare SteamID64 → SteamID64 digits; anything else (BOT, STEAM_ID_PENDING…) → null. */
export function toSteamId64(id: string): string | null {
  const steam2 = /^STEAM_[0-5]:([01]):(\d{1,10})$/.exec(id);
  if (steam2) return (STEAM64_BASE + BigInt(steam2[2]!) * 2n + BigInt(steam2[1]!)).toString();
  const steam3 = /^\[U:1:(\d{1,10})\]$/.exec(id);
  if (steam3) return (STEAM64_BASE + BigInt(steam3[1]!)).toString();
  if (/^7656119\d{10}$/.test(id)) return id;
  return null;
}

/** The first Steam id spelled anywhere in `text`, as SteamID64, or null. */
export function findSteamId64(text: string): string | null {
  const match = /STEAM_[0-5]:[01]:\d{1,10}|\[U:1:\d{1,10}\]|(?<!\d)7656119\d{10}(?!\d)/.exec(text);
  return match ? toSteamId64(match[0]) : null;
}
