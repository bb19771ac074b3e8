import { createHash } from 'node:crypto';

/** Who is on the simulated game server. Names keep their spelling; lookups ignore case, as Minecraft's do. */
export class SimPlayers {
  #online: string[] = [];

  constructor(initial: readonly string[] = []) {
    this.set(initial);
  }

  list(): string[] {
    return [...this.#online];
  }

  set(names: readonly string[]): void {
    const seen = new Set<string>();
    this.#online = names.filter((name) => {
      const key = name.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  join(name: string): void {
    if (!this.find(name)) this.#online.push(name);
  }

  leave(name: string): void {
    const key = name.toLowerCase();
    this.#online = this.#online.filter((online) => online.toLowerCase() !== key);
  }

  /** The online player with this exact name (any case), never a substring match. */
  find(name: string): string | undefined {
    const key = name.toLowerCase();
    return this.#online.find((online) => online.toLowerCase() === key);
  }
}

/** The UUID an offline-mode Minecraft server gives a name: UUID.nameUUIDFromBytes("OfflinePlayer:" + name). */
export function offlineUuid(name: string): string {
  const hash = createHash('md5').update(`OfflinePlayer:${name}`, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x30;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A stable fake SteamID64 per name, for Source- and Palworld-style listings. */
export function fakeSteamId64(name: string): string {
  const hash = createHash('sha256').update(name.toLowerCase(), 'utf8').digest();
  return (76561197960265728n + BigInt(hash.readUInt32BE(0))).toString();
}
