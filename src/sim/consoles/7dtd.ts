/**
 * The 7 Days to Die console's commands, as far as porter's tests and demo use them. Texts come
 * from decompiled server code: SdtdConsole (tokenising, `*** ERROR: …` lines), ConsoleCmdListPlayers
 * (`lp` rows and `Total of N in the game`), ConsoleCmdGiveXp, and Alloc's server fixes' `give`
 * ("Dropped item", "Item not found.", "Playername or entity id not found."); log lines as servers
 * print them (`PlayerSpawnedInWorld …`, `Chat (from '-non-player-' …`).
 */

interface SevenDaysPlayer {
  readonly entityId: number;
  readonly name: string;
  /** `Steam_7656…`, `XBL_…`, or `<unknown>`. */
  readonly platformId: string;
  /** `EOS_…` or `<unknown>`. */
  readonly crossId: string;
  readonly ip: string;
}

export interface SevenDaysJoin {
  readonly name: string;
  readonly platformId?: string;
  readonly crossId?: string;
}

/** What one command did: lines for the session that sent it, and lines for the server log. */
export interface ConsoleResult {
  readonly output: readonly string[];
  readonly logs: readonly string[];
}

/** The items `give` knows (a few of the game's real item names); lookups ignore case, as the game's do. */
const ITEMS = ['casinoCoin', 'drinkJarBoiledWater', 'foodCanChili', 'gunPistol', 'medicalFirstAidKit', 'resourceWood', 'ammo9mmBulletBall'];

export class SevenDaysWorld {
  #players: SevenDaysPlayer[] = [];
  #nextEntityId = 171;
  /** Print `steamid=` rows, as servers before crossplay did. */
  legacyListFormat = false;

  list(): SevenDaysPlayer[] {
    return [...this.#players];
  }

  /** Adds a player (ids derived from the name unless given); returns the log line the server writes. */
  join(join: SevenDaysJoin): string | undefined {
    if (this.find(join.name)) return undefined;
    const n = this.#nextEntityId++;
    const player: SevenDaysPlayer = {
      entityId: n,
      name: join.name,
      platformId: join.platformId ?? `Steam_${76561198000000000n + BigInt(n)}`,
      crossId: join.crossId ?? `EOS_${n.toString(16).padStart(32, '0')}`,
      ip: `192.168.1.${n % 250}`,
    };
    this.#players.push(player);
    return (
      `PlayerSpawnedInWorld (reason: JoinMultiplayer, position: 0, 50, 0): EntityID=${player.entityId}, ` +
      `PltfmId='${player.platformId}', CrossId='${player.crossId}', OwnerID='${player.platformId}', PlayerName='${player.name}', ClientNumber='${n}'`
    );
  }

  leave(name: string): string | undefined {
    const player = this.find(name);
    if (!player) return undefined;
    this.#players = this.#players.filter((p) => p !== player);
    return `Player disconnected: EntityID=${player.entityId}, PltfmId='${player.platformId}', CrossId='${player.crossId}', PlayerName='${player.name}'`;
  }

  /** The player a console argument names: entity id, name (any case), platform id or cross id. */
  find(idOrName: string): SevenDaysPlayer | undefined {
    const key = idOrName.toLowerCase();
    return this.#players.find(
      (p) =>
        String(p.entityId) === idOrName ||
        p.name.toLowerCase() === key ||
        p.platformId.toLowerCase() === key ||
        p.crossId.toLowerCase() === key,
    );
  }
}

/** SdtdConsole.tokenizeCommand: blanks split, double quotes group, `""` inside quotes is a quote. */
export function tokenize(command: string): string[] | { error: string } {
  const tokens: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < command.length; i += 1) {
    const c = command[i];
    if (!quoted) {
      if (c === '"') {
        if (i > start) tokens.push(command.slice(start, i));
        start = i + 1;
        quoted = true;
      } else if (c === ' ' || c === '\t') {
        if (i > start) tokens.push(command.slice(start, i));
        start = i + 1;
      }
    } else if (c === '"') {
      if (command[i + 1] === '"') {
        i += 1;
        continue;
      }
      tokens.push(command.slice(start, i).replaceAll('""', '"'));
      start = i + 1;
      quoted = false;
    }
  }
  if (quoted) return { error: `*** ERROR: Quotation started at position ${start} was not closed` };
  if (start < command.length) tokens.push(command.slice(start));
  return tokens;
}

/** Listing commands: they change nothing. */
const QUERIES = new Set(['listplayers', 'lp', 'gettime', 'gt', 'version']);

export function isKnownCommand(root: string): boolean {
  return QUERIES.has(root.toLowerCase()) || ['give', 'givexp', 'say'].includes(root.toLowerCase());
}

export function isQueryRoot(root: string): boolean {
  return QUERIES.has(root.toLowerCase());
}

/** Runs a known command; throws where the game's command would throw (the console reports it as failed). */
export function runConsoleCommand(root: string, params: readonly string[], world: SevenDaysWorld): ConsoleResult {
  switch (root.toLowerCase()) {
    case 'listplayers':
    case 'lp':
      return { output: listPlayers(world), logs: [] };
    case 'gettime':
    case 'gt':
      return { output: ['Day 7, 21:42'], logs: [] };
    case 'version':
      return { output: ['Game version: V 1.0 (b333) Compatibility Version: V 1.0'], logs: [] };
    case 'give':
      return { output: [give(params, world)], logs: [] };
    case 'givexp':
      return { output: giveXp(params, world), logs: [] };
    case 'say':
      if (params.length < 1) return { output: ['Usage: say <message>'], logs: [] };
      return { output: [], logs: [`Chat (from '-non-player-', entity id '-1', to 'Global'): 'Server': ${params[0]}`] };
    default:
      throw new Error(`not a command of the simulated console: ${root}`);
  }
}

function listPlayers(world: SevenDaysWorld): string[] {
  const players = world.list();
  const rows = players.map((p, i) => {
    const row =
      `${i}. id=${p.entityId}, ${p.name}, pos=(-532.0, 48.0, -446.1), rot=(-4.2, 369.8, 0.0), remote=True, ` +
      'health=100, deaths=0, zombies=8, players=0, score=8, level=2';
    if (world.legacyListFormat) return `${row}, steamid=${p.platformId.replace(/^Steam_/, '')}, ip=${p.ip}, ping=7`;
    return `${row}, pltfmid=${p.platformId}, crossid=${p.crossId}, ip=${p.ip}, ping=7`;
  });
  return [...rows, `Total of ${players.length} in the game`];
}

function give(params: readonly string[], world: SevenDaysWorld): string {
  if (params.length !== 3 && params.length !== 4) return `Wrong number of arguments, expected 3 or 4, found ${params.length}.`;
  if (!world.find(params[0]!)) return 'Playername or entity id not found.';
  if (!ITEMS.some((item) => item.toLowerCase() === params[1]!.toLowerCase())) return 'Item not found.';
  const amount = Number(params[2]);
  if (!Number.isInteger(amount) || amount <= 0) return 'Amount is not an integer or not greater than zero.';
  if (params.length === 4 && !/^[0-6]$/.test(params[3]!)) return 'Quality is not an integer or not greater than zero.';
  return 'Dropped item';
}

function giveXp(params: readonly string[], world: SevenDaysWorld): string[] {
  if (params.length < 2) return ['givexp requires a target entity id and xp amount'];
  if (!world.find(params[0]!)) return ['Playername or entity id not found.'];
  if (!/^-?\d+$/.test(params[1]!)) return ['xp amount must be a number.'];
  if (Number(params[1]) < 0) return ['xp amount must be positive.'];
  return [];
}
