import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { PorterError } from '../../src/errors.js';
import { runInit } from '../../src/init/init.js';
import { flagsOnlyPrompter } from '../../src/init/prompter.js';
import { startRconServer } from '../../src/sim/rcon-server.js';
import { startTelnetServer } from '../../src/sim/telnet-server.js';
import { SIM_SERVER_ID, startSellerApi, type FakeSellerApi } from '../../src/sim/seller-api.js';
import { fcOptions } from '../helpers/fc-options.js';
import { CLI } from './harness.js';

/**
 * What init proved is what `porter run` uses: for any password a Minecraft server.properties or a
 * 7 Days to Die serverconfig.xml or a Source server.cfg can hold (blanks anywhere, the format's escapes, quotes, non-ASCII) and any API token a token file
 * can hold, `porter init --yes` either writes files `porter check` passes (logging in to the same
 * game server with them), or refuses and says why, naming no secret.
 */

/** The characters a password or token is made of: plain, blanks, quotes, the format's specials, non-ASCII. */
const CHARACTER = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...'abcXYZ019') },
  { weight: 2, arbitrary: fc.constantFrom(' ', '\t') },
  { weight: 2, arbitrary: fc.constantFrom('"', "'", '`') },
  { weight: 2, arbitrary: fc.constantFrom('\\', '=', ':', '#', '!', '$', '%', ';', '&') },
  { weight: 2, arbitrary: fc.constantFrom('é', 'ß', 'Ω', '中', '文', '€', '😀', '\u00a0') },
);

const SECRET = fc.array(CHARACTER, { minLength: 1, maxLength: 24 }).map((characters) => characters.join(''));

/**
 * One way java.util.Properties reads `character` back (its Javadoc): as itself where that is
 * unambiguous, else escaped; any character may also be a backslash escape or a \uXXXX escape.
 */
function written(character: string, index: number, style: number): string {
  const units = [...character].map((unit) => unit.codePointAt(0)!);
  const uEscape = () =>
    character
      .split('')
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join('');
  if (character === '\\') return style % 2 === 0 ? '\\\\' : '\\u005c';
  if (character === '\t') return style % 2 === 0 ? '\\t' : uEscape();
  if (character === ' ' && index === 0) return style % 2 === 0 ? '\\ ' : uEscape();
  switch (style % 3) {
    case 0:
      return character;
    case 1:
      return units.length === 1 && units[0]! < 0x80 ? `\\${character}` : uEscape();
    default:
      return uEscape();
  }
}

/** One way .NET's XmlDocument reads `character` back from a "-quoted attribute: as itself, an entity or a character reference. */
function xmlWritten(character: string, style: number): string {
  const code = character.codePointAt(0)!;
  const reference = style % 2 === 0 ? `&#${code};` : `&#x${code.toString(16)};`;
  const entity: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
  // Attribute value normalization makes a literal tab a space: a tab is always a reference.
  if (character === '\t') return reference;
  if (character === '&' || character === '<' || character === '"') return style % 3 === 0 ? entity[character]! : reference;
  switch (style % 3) {
    case 0:
      return character;
    case 1:
      return entity[character] ?? character;
    default:
      return reference;
  }
}

function propertiesLine(password: string, styles: readonly number[]): string {
  return `rcon.password=${[...password].map((character, i) => written(character, i, styles[i % styles.length]!)).join('')}`;
}

function porterCheck(config: string): Promise<{ code: number; output: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PORTER_') && key !== 'NODE_TEST_CONTEXT') env[key] = value;
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'check', '-c', config], { timeout: 60_000, env }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

interface GameFormat {
  readonly game: 'minecraft' | '7dtd' | 'source';
  readonly file: string;
  /** Whether the format can hold `password` at all (Source's quotes have no escape for `"`). */
  readonly holds?: (password: string) => boolean;
  /** The settings name no port (Source's RCON is on the game port, given by -port): --rcon-port. */
  readonly portFlag?: boolean;
  /** The settings file, with `password` written in one of the ways the format allows. */
  settings(port: number, password: string, styles: readonly number[]): string;
}

const FORMATS: readonly GameFormat[] = [
  {
    game: 'source',
    file: 'cfg/server.cfg',
    holds: (password) => !password.includes('"'),
    portFlag: true,
    settings: (_port, password) => `hostname "A Source Server"\nrcon_password "${password}" // set by the owner\n`,
  },
  {
    game: 'minecraft',
    file: 'server.properties',
    settings: (port, password, styles) =>
      `enable-rcon=true\nrcon.port=${port}\n${propertiesLine(password, styles)}\nmotd=A Minecraft Server\n`,
  },
  {
    game: '7dtd',
    file: 'serverconfig.xml',
    settings: (port, password, styles) =>
      [
        '<?xml version="1.0"?>',
        '<ServerSettings>',
        '\t<property name="TelnetEnabled" value="true"/>',
        `\t<property name="TelnetPort" value="${port}"/>`,
        `\t<property name="TelnetPassword" value="${[...password].map((c, i) => xmlWritten(c, styles[i % styles.length]!)).join('')}"/>`,
        '</ServerSettings>',
        '',
      ].join('\n'),
  },
];

interface GameServer {
  readonly port: number;
  setPassword(password: string): void;
  close(): Promise<void>;
}

describe('porter init: what it proved is what porter check uses', () => {
  let api: FakeSellerApi;
  let servers: Record<GameFormat['game'], GameServer>;
  let work: string;
  before(async () => {
    api = await startSellerApi({ servers: [{ id: SIM_SERVER_ID, name: 'survival' }] });
    servers = {
      minecraft: await startRconServer({ password: 'replaced-each-run', flavour: 'minecraft' }),
      '7dtd': await startTelnetServer({ password: 'replaced-each-run' }),
      source: await startRconServer({ password: 'replaced-each-run', flavour: 'source' }),
    };
    work = mkdtempSync(join(tmpdir(), 'porter-init-secrets-'));
  });
  after(async () => {
    await Promise.all([api.close(), ...Object.values(servers).map((server) => server.close())]);
    rmSync(work, { recursive: true, force: true });
  });

  test("any password its game's settings file can hold and any token in a token file: init then porter check passes, or init refuses saying why", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FORMATS),
        SECRET,
        fc.array(fc.nat(5), { minLength: 1, maxLength: 8 }),
        SECRET.map((tail) => `gci_${tail}`),
        async (format, password, styles, written) => {
          // A token file is read trimmed: blanks around the token are the file's, not the token's.
          const token = written.trim();
          fc.pre(format.holds?.(password) ?? true);
          run += 1;
          const folder = join(work, `game-${run}`);
          const dir = join(work, `porter-${run}`);
          const game = servers[format.game];
          mkdirSync(join(folder, dirname(format.file)), { recursive: true });
          writeFileSync(join(folder, format.file), format.settings(game.port, password, styles));
          const tokenFile = join(work, `token-${run}`);
          writeFileSync(tokenFile, `${written}\n`);
          game.setPassword(password);
          api.setToken(token, ['commands:execute', 'servers:read']);

          const said: string[] = [];
          const out = { write: (text: string) => said.push(text) } as unknown as NodeJS.WritableStream;
          const secrets = [password, token];
          // As porter's scrubber: shorter secrets are not looked for in free text.
          const scrub = (text: string) =>
            secrets.reduce((line, secret) => (secret.length < 4 ? line : line.split(secret).join('[secret]')), text);
          let refusal: PorterError | undefined;
          try {
            await runInit(
              {
                apiUrl: api.url,
                tokenFile,
                serverId: SIM_SERVER_ID,
                game: format.game,
                ...(format.portFlag === true && { rconPort: game.port }),
                gameDir: folder,
                dir,
                yes: true,
                fixGameSettings: false,
                force: false,
                systemd: false,
              },
              { prompter: flagsOnlyPrompter(out, scrub), env: {}, onSecret: () => undefined, cwd: work },
            );
          } catch (error) {
            if (!(error instanceof PorterError)) throw error;
            refusal = error;
          }
          const printed = said.join('');
          // What porter cannot keep: a password file is read trimmed, a token is printable ASCII.
          const unkeepable = password !== password.trim() || /[^\x21-\x7e]/.test(token);
          if (refusal !== undefined) {
            // A refusal names what is wrong and what to do, and only for a secret porter could not keep.
            assert.ok(unkeepable, `refused: ${refusal.message}\ninit said:\n${printed}`);
            assert.match(
              refusal.message,
              /password begins or ends with a blank|token contains spaces, line breaks or characters beyond ASCII/,
            );
            assert.doesNotMatch(printed, /player.* online/, 'refused after a proven login');
            for (const secret of secrets) {
              if (secret.trim().length >= 4) assert.ok(!refusal.message.includes(secret), `a secret in: ${refusal.message}`);
            }
            return;
          }
          assert.ok(!unkeepable, `not refused:\n${printed}`);
          assert.match(printed, /127\.0\.0\.1:\d+ accepted|Logon successful|logged in/i, printed);
          const check = await porterCheck(join(dir, 'config.json'));
          api.setToken(token, null);
          assert.equal(check.code, 0, `porter check after init:\n${check.output}\ninit said:\n${printed}`);
        },
      ),
      fcOptions({ numRuns: 40 }),
    );
  });
});
