/**
 * How porter reaches each game's console and the port a server uses when its settings do not
 * say: the defaults of each game's own documentation (docs/games.md has them per game).
 */
export interface Transport {
  readonly type: 'rcon' | 'webrcon' | 'telnet' | 'battleye' | 'tshock';
  readonly port: number;
  readonly title: string;
}

export const GAME_TRANSPORTS: Readonly<Record<string, Transport>> = {
  minecraft: { type: 'rcon', port: 25575, title: 'Minecraft' },
  source: { type: 'rcon', port: 27015, title: 'Source engine (CS2, GMod, TF2)' },
  ark: { type: 'rcon', port: 27020, title: 'ARK' },
  palworld: { type: 'rcon', port: 25575, title: 'Palworld' },
  squad: { type: 'rcon', port: 21114, title: 'Squad' },
  conan: { type: 'rcon', port: 25575, title: 'Conan Exiles' },
  factorio: { type: 'rcon', port: 27015, title: 'Factorio' },
  zomboid: { type: 'rcon', port: 27015, title: 'Project Zomboid' },
  rust: { type: 'webrcon', port: 28016, title: 'Rust' },
  '7dtd': { type: 'telnet', port: 8081, title: '7 Days to Die' },
  dayz: { type: 'battleye', port: 2305, title: 'DayZ' },
  arma3: { type: 'battleye', port: 2305, title: 'Arma 3' },
  terraria: { type: 'tshock', port: 7878, title: 'Terraria (TShock)' },
};

export const INIT_GAMES = Object.keys(GAME_TRANSPORTS);
