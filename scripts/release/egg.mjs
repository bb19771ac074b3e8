// The game-panel egg of this version (PTDL_v2, which Pterodactyl and Pelican both import;
// docs/install.md#game-panels). It is made here and only here: its installation script is
// deploy/pterodactyl/install.sh, and the default of PORTER_RELEASE_URL is this version's release
// (urls.mjs), so the egg a release carries installs that release with no variable to look up.
// What each field does in the panels and their Wings is in test/ship/panel.ts, from their sources.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { releaseBaseUrl } from './urls.mjs';

// The install fetches the single executable, never the npm tarball. The executable needs no Node
// in the installer or the server's image, no registry, and one file checked against SHA256SUMS;
// both images below are Debian (glibc), which it runs on. The tarball would be a second install
// path to keep working for one case only: an Alpine (musl) image such as pterodactyl/yolks'
// nodejs ones, which the egg does not offer.
const EXECUTABLE = './porter';

/**
 * The games porter init offers (those with a console, in the registry's order) and their console
 * transports, read from the built games registry (src/games/registry.ts, one record per game), so
 * a game added there is in the egg without an edit here.
 */
async function gamesOf(root) {
  const { GAMES } = await import(pathToFileURL(resolve(root, 'dist/src/games/registry.js')).href);
  const games = Object.values(GAMES).filter((game) => game.console);
  return { games: games.map((game) => game.id), consoles: [...new Set(games.map((game) => game.console.transport))] };
}

/**
 * The values the panel writes into porter.json before each start. Paths are `servers.0.…`, not
 * `servers[0].…`: Pelican's Wings sets them with tidwall/sjson, which has no `[i]` and would make
 * a key "servers[0]"; Pterodactyl's Wings hands a path without `[i]` to gabs' SetP, which indexes
 * an existing array by a numeric segment. Both keep the type a number already has in the file
 * (the port), and neither sees a secret: those reach porter from its environment.
 */
const CONFIG_VALUES = {
  'api.baseUrl': 'STORE_API_URL',
  'servers.0.id': 'STORE_SERVER_ID',
  'servers.0.executor.type': 'GAME_CONSOLE',
  'servers.0.executor.host': 'GAME_CONSOLE_HOST',
  'servers.0.executor.port': 'GAME_CONSOLE_PORT',
  'servers.0.players.preset': 'GAME',
};

const variable = (name, env_variable, description, default_value, rules, user_editable = true) => ({
  name,
  description,
  env_variable,
  default_value,
  user_viewable: true,
  user_editable,
  rules,
  field_type: 'text',
});

/** The egg of `pkg`'s version, as an object; `root` is the repository's folder, built (`dist/`). */
export async function buildEgg(pkg, root = '.') {
  const { games: GAMES, consoles: CONSOLES } = await gamesOf(root);
  const find = Object.fromEntries(Object.entries(CONFIG_VALUES).map(([path, name]) => [path, `{{server.build.env.${name}}}`]));
  return {
    _comment: `porter ${pkg.version}, the game store's delivery connector, beside a game server on Pterodactyl or Pelican. Guide: docs/install.md#game-panels`,
    meta: { version: 'PTDL_v2', update_url: null },
    exported_at: '2026-11-29T00:00:00+00:00',
    name: 'porter',
    author: 'porter@seller.example.com',
    description: `Delivers your game store's purchases to a game server on this panel, exactly once: porter ${pkg.version} as a server of its own beside the game server, reaching the game's console (RCON, WebRCON, telnet, BattlEye, TShock REST) through an allocation of the game server.`,
    features: [],
    // porter is one executable with its Node inside: any glibc image runs it. One yolk of each
    // panel's image project, whose entrypoints treat the startup line differently (panel.ts).
    docker_images: {
      'Debian - pelican-eggs': 'ghcr.io/pelican-eggs/yolks:debian',
      'Debian - pterodactyl': 'ghcr.io/pterodactyl/yolks:debian',
    },
    file_denylist: [],
    // No `exec`: pterodactyl/yolks run the line with `exec env <line>`, where `exec` is no command.
    // pelican-eggs' bash `eval`s it as a child, so the stop is SIGINT: bash waits for a child that
    // handles SIGINT and exits with its status, where a SIGTERM would end bash, and tini with it,
    // before porter drained.
    startup: `${EXECUTABLE} run -c porter.json`,
    config: {
      files: JSON.stringify({ 'porter.json': { parser: 'json', find } }, null, 4),
      startup: JSON.stringify({ done: 'porter started' }, null, 4),
      logs: '{}',
      stop: '^SIGINT',
    },
    scripts: {
      installation: {
        script: readFileSync(join(root, 'deploy/pterodactyl/install.sh'), 'utf8'),
        // Debian with curl and ca-certificates: what the script needs.
        container: 'ghcr.io/pelican-eggs/installers:debian',
        entrypoint: 'bash',
      },
    },
    variables: [
      variable('Store API URL', 'STORE_API_URL', 'The Seller API address of your store, https://…', '', 'required|url|max:255'),
      variable('Store server id', 'STORE_SERVER_ID', "This game server's id in the store dashboard (a UUID).", '', 'required|uuid'),
      variable(
        'Store API token',
        'PORTER_API_TOKEN',
        'An API token of your store with the scope commands:execute. Set it here yourself: porter reads it from its environment, and it is never printed on the console or written to a file.',
        '',
        'required|string|max:255',
      ),
      variable(
        'Game console host',
        'GAME_CONSOLE_HOST',
        "Where porter reaches the game server's console: the panel's bridge gateway (Wings' docker.network.interface, usually 172.18.0.1) when the game's console allocation listens on 0.0.0.0, else that allocation's IP.",
        '172.18.0.1',
        'required|string|max:255',
      ),
      variable(
        'Game console port',
        'GAME_CONSOLE_PORT',
        "The port of the game server's console allocation (Minecraft: rcon.port in server.properties).",
        '25575',
        'required|integer|between:1,65535',
      ),
      variable(
        'Game console password',
        'PORTER_RCON_PASSWORD',
        "The game server's RCON (or WebRCON, telnet, BattlEye) password, or TShock's REST token. Set it here yourself: porter reads it from its environment, and it is never printed on the console or written to a file.",
        '',
        'required|string|max:255',
      ),
      variable(
        'Game',
        'GAME',
        `The game, for its player list and failure answers: ${GAMES.join(', ')}.`,
        'minecraft',
        `required|string|in:${GAMES.join(',')}`,
      ),
      variable(
        'Game console type',
        'GAME_CONSOLE',
        `How porter talks to the game: ${CONSOLES.join(', ')} (docs/games.md says which game speaks which).`,
        'rcon',
        `required|string|in:${CONSOLES.join(',')}`,
      ),
      // A host's setting, not the server owner's: which binary the server runs.
      variable(
        'porter release URL',
        'PORTER_RELEASE_URL',
        `The folder the installer downloads porter and its SHA256SUMS from: porter ${pkg.version}'s release, or a mirror holding the same files. Point it at a newer release and reinstall to update porter.`,
        releaseBaseUrl(pkg),
        'required|url|max:255',
        false,
      ),
    ],
  };
}

/** Writes egg-porter.json into `out`; returns its path. */
export async function writeEgg(out, pkg) {
  const path = join(out, 'egg-porter.json');
  writeFileSync(path, `${JSON.stringify(await buildEgg(pkg), null, 4)}\n`);
  return path;
}
