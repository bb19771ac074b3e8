import { createHash } from 'node:crypto';

/**
 * A player's BattlEye GUID, as BattlEye RCon's `players` prints it: the MD5 of the bytes 'B', 'E'
 * and the SteamID64 as 8 little-endian bytes, in lower-case hex. A store that knows its buyers'
 * SteamID64 renders the GUID with this, so an online-only command matches the GUID porter reads.
 * Undefined for anything that is not a SteamID64 (a decimal number that fits in 64 bits).
 */
export function battleyeGuid(steamId64: string): string | undefined {
  if (!/^\d{1,20}$/.test(steamId64)) return undefined;
  const id = BigInt(steamId64);
  if (id >= 2n ** 64n) return undefined;
  const bytes = Buffer.alloc(10);
  bytes.write('BE', 0, 'latin1');
  bytes.writeBigUInt64LE(id, 2);
  return createHash('md5').update(bytes).digest('hex');
}
