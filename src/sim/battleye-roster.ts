import { battleyeGuid } from '../games/battleye-guid.js';
import { fakeSteamId64 } from './rcon-players.js';

/** A player on the simulated DayZ / Arma 3 server. */
export interface SimBattlEyePlayer {
  readonly name: string;
  /** Their SteamID64; a stable fake one from the name when not given. */
  readonly steamId64?: string;
  /** Still loading into the world: the row ends in ` (Lobby)`. */
  readonly lobby?: boolean;
  /** GUID not yet verified by BattlEye's master: `(?)` instead of `(OK)`. */
  readonly unverified?: boolean;
  /** Still joining: no GUID yet (`-`) and a ping of -1. */
  readonly joining?: boolean;
}

interface Seat extends SimBattlEyePlayer {
  readonly slot: number;
  readonly guid: string;
  readonly address: string;
}

/**
 * Who is on the simulated server, in BattlEye slots (the `#` column, the lowest free one on join).
 * The `players` table copies the layout BattlEye RCon prints (column order, `(OK)`/`(?)` after the
 * GUID, ` (Lobby)` after the name, the closing total), as open-source BattlEye RCon tools parse it.
 */
export class BattlEyeRoster {
  #seats: Seat[] = [];

  constructor(players: readonly (string | SimBattlEyePlayer)[] = []) {
    for (const player of players) this.join(player);
  }

  names(): string[] {
    return this.#seats.map((seat) => seat.name);
  }

  join(player: string | SimBattlEyePlayer): Seat {
    const wanted = typeof player === 'string' ? { name: player } : player;
    const existing = this.find(wanted.name);
    if (existing) return existing;
    let slot = 0;
    while (this.#seats.some((seat) => seat.slot === slot)) slot += 1;
    const steamId64 = wanted.steamId64 ?? fakeSteamId64(wanted.name);
    const seat: Seat = {
      ...wanted,
      steamId64,
      slot,
      guid: battleyeGuid(steamId64) ?? '',
      address: `198.51.100.${10 + (slot % 200)}:2304`,
    };
    this.#seats = [...this.#seats, seat].sort((a, b) => a.slot - b.slot);
    return seat;
  }

  leave(name: string): Seat | undefined {
    const seat = this.find(name);
    if (seat) this.#seats = this.#seats.filter((other) => other !== seat);
    return seat;
  }

  bySlot(slot: number): Seat | undefined {
    return this.#seats.find((seat) => seat.slot === slot);
  }

  find(name: string): Seat | undefined {
    const key = name.toLowerCase();
    return this.#seats.find((seat) => seat.name.toLowerCase() === key);
  }

  /** The answer to `players`. */
  table(): string {
    const rows = this.#seats.map((seat) => {
      const ping = seat.joining ? '-1' : String(20 + ((seat.slot * 17) % 90));
      const guid = seat.joining ? '-'.padEnd(36) : `${seat.guid}${seat.unverified ? '(?)' : '(OK)'}`;
      const name = seat.lobby || seat.joining ? `${seat.name} (Lobby)` : seat.name;
      return `${String(seat.slot).padEnd(4)}${seat.address.padEnd(22)}${ping.padEnd(5)}${guid} ${name}`;
    });
    return [
      'Players on server:',
      '[#] [IP Address]:[Port] [Ping] [GUID] [Name]',
      '--------------------------------------------------',
      ...rows,
      `(${this.#seats.length} players in total)`,
    ].join('\n');
  }
}
