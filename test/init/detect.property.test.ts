import { dirname } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { detectGameServers } from '../../src/init/detect/detect.js';
import type { FileSeam } from '../../src/init/detect/files.js';
import { fcOptions } from '../helpers/fc-options.js';

/** An in-memory file system: path → bytes; folders are implied by the paths. */
function memoryFiles(files: ReadonlyMap<string, Buffer>): FileSeam {
  const missing = () => Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
  return {
    readFile(path, limit) {
      const bytes = files.get(path);
      if (!bytes) throw missing();
      return { bytes: bytes.subarray(0, limit), complete: bytes.length <= limit };
    },
    readDir(path) {
      const names = new Set<string>();
      for (const file of files.keys()) {
        for (let dir = file; dir !== '/'; dir = dirname(dir)) if (dirname(dir) === path) names.add(dir.slice(path.length + 1));
      }
      if (names.size === 0) throw missing();
      return [...names];
    },
    readLink: () => {
      throw missing();
    },
    fileId: (path) => path,
  };
}

const ROOT = '/srv/game';

type Shape = (value: string) => string;

/**
 * Each parser's file at its usual place, with any other files its game needs beside it, the
 * lines of its format with a value to fill in (so runs reach the password often), and the
 * characters after which the format decodes escapes (a password then need not be in the file as is).
 */
const GAMES: Record<string, { file: string; beside?: Record<string, string>; escapes: string[]; shapes: Shape[] }> = {
  minecraft: {
    file: 'server.properties',
    escapes: ['\\'],
    shapes: [
      (v) => `rcon.password=${v}`,
      (v) => `enable-rcon=${v}`,
      (v) => `rcon.port${v}`,
      (v) => `  rcon.password : ${v}\\`,
      () => 'enable-rcon=true',
      (v) => `#${v}`,
    ],
  },
  itzg: {
    file: '.rcon-cli.env',
    beside: { 'server.properties': 'enable-rcon=true\nrcon.port=25575\n' },
    escapes: ['\\'],
    shapes: [(v) => `password=${v}`, (v) => `# ${v}`],
  },
  palworld: {
    file: 'Pal/Saved/Config/LinuxServer/PalWorldSettings.ini',
    escapes: ['\\'],
    shapes: [
      (v) => `OptionSettings=(RCONEnabled=True,AdminPassword="${v}",RCONPort=25575)`,
      (v) => `OptionSettings=(Crossplay=(Steam,${v}),AdminPassword=${v})`,
      (v) => `OptionSettings=(AdminPassword="${v}"`,
      () => '[/Script/Pal.PalGameWorldSettings]',
    ],
  },
  ark: {
    file: 'ShooterGame/Saved/Config/LinuxServer/GameUserSettings.ini',
    escapes: ['\\'],
    shapes: [
      () => '[ServerSettings]',
      (v) => `[ServerSettings]\nServerAdminPassword=${v}`,
      (v) => `ServerAdminPassword=${v}`,
      (v) => `ServerAdminPassword="${v}"`,
      (v) => `RCONEnabled=${v}`,
      (v) => `[${v}]`,
    ],
  },
  conan: {
    file: 'ConanSandbox/Saved/Config/WindowsServer/Game.ini',
    escapes: ['\\'],
    shapes: [() => '[RconPlugin]', (v) => `[RconPlugin]\nRconPassword=${v}`, (v) => `RconPassword=${v}`, (v) => `RconEnabled=${v}`],
  },
  rust: {
    file: 'server/main/cfg/server.cfg',
    escapes: [],
    shapes: [(v) => `rcon.password "${v}"`, (v) => `rcon.password ${v}`, (v) => `server.port ${v}; rcon.web ${v}`, (v) => `// ${v}`],
  },
  source: {
    file: 'game/csgo/cfg/server.cfg',
    escapes: [],
    shapes: [(v) => `rcon_password "${v}"`, (v) => `rcon_password ${v} // x`, (v) => `hostname ${v}; rcon_password ${v}`],
  },
  squad: {
    file: 'SquadGame/ServerConfig/Rcon.cfg',
    escapes: ['\\'],
    shapes: [(v) => `Password=${v}`, (v) => `Port=${v}`, (v) => `// ${v}`],
  },
  zomboid: {
    file: 'Zomboid/Server/servertest.ini',
    escapes: ['\\'],
    shapes: [() => 'PVP=true', (v) => `PVP=true\nRCONPassword=${v}`, (v) => `RCONPassword=${v}`, (v) => `RCONPort=${v}`, (v) => `# ${v}`],
  },
  '7dtd': {
    file: 'serverconfig.xml',
    escapes: ['&'],
    shapes: [
      (v) => `<property name="TelnetPassword" value="${v}"/>`,
      (v) => `<property name='TelnetPassword' value='${v}' />`,
      () => '<property name="TelnetPort" value="8081"/>',
      (v) => `<!-- ${v}`,
      () => '-->',
      () => '</ServerSettings>',
    ],
  },
  dayz: {
    file: 'battleye/BEServer_x64.cfg',
    beside: { 'serverDZ.cfg': '' },
    escapes: [],
    shapes: [(v) => `RConPassword ${v}`, (v) => `RConPort ${v}`, (v) => `RestrictRCon ${v}`],
  },
  arma3: {
    file: 'battleye/beserver_x64.cfg',
    beside: { arma3server_x64: '' },
    escapes: [],
    shapes: [(v) => `RConPassword ${v}`, (v) => `//${v}`, (v) => `RConIP ${v}`],
  },
  terraria: {
    file: 'tshock/config.json',
    escapes: ['\\'],
    shapes: [
      (v) => `{"Settings":{"RestApiEnabled":true,"ApplicationRestTokens":{${JSON.stringify(v)}:{"UserGroupName":"superadmin"}}}}`,
      (v) => `{"RestApiPort":${v},"ApplicationRestTokens":{${JSON.stringify(v)}:{}}}`,
    ],
  },
};

/** A value to fill in: any text, often plain, sometimes with the format's special characters. */
const value = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', maxLength: 16 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.constantFrom('', ' ', '"', '\\', '=', ',', ')', '&amp;', '\u00a0', '\t'),
);

/** File contents: the format's lines with any values, any text, line breaks and raw bytes, sometimes behind a byte order mark. */
function contents(shapes: readonly Shape[]): fc.Arbitrary<Buffer> {
  const lineBreak = fc.constantFrom('\n', '\r\n', '\r');
  const piece = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.tuple(fc.constantFrom(...shapes), value, lineBreak).map(([shape, text, end]) => Buffer.from(shape(text) + end)),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }).map((text) => Buffer.from(text)) },
    { weight: 1, arbitrary: lineBreak.map((text) => Buffer.from(text)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 6 }).map((bytes) => Buffer.from(bytes)) },
  );
  const bom = fc.constantFrom(
    Buffer.alloc(0),
    Buffer.alloc(0),
    Buffer.alloc(0),
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from([0xff, 0xfe]),
  );
  // A single well-formed line alone, too: the JSON shapes only parse that way.
  const alone = fc.tuple(fc.constantFrom(...shapes), value).map(([shape, text]) => Buffer.from(shape(text)));
  const mixed = fc.tuple(bom, fc.array(piece, { maxLength: 12 })).map(([mark, pieces]) => Buffer.concat([mark, ...pieces]));
  return fc.oneof({ weight: 1, arbitrary: alone }, { weight: 4, arbitrary: mixed });
}

/** Whether the password's text is in the file as the file stores it (UTF-8, or UTF-16 after its byte order mark). */
function inFile(bytes: Buffer, password: string): boolean {
  return bytes.includes(Buffer.from(password, 'utf8')) || bytes.subarray(2).includes(Buffer.from(password, 'utf16le'));
}

describe('detection over arbitrary file contents', () => {
  for (const [name, game] of Object.entries(GAMES)) {
    test(`${name}: never throws, and never returns a password that is not in the file`, () => {
      let withPassword = 0;
      fc.assert(
        fc.property(contents(game.shapes), (bytes) => {
          const files = new Map<string, Buffer>(
            Object.entries(game.beside ?? {}).map(([path, text]) => [`${ROOT}/${path}`, Buffer.from(text)]),
          );
          files.set(`${ROOT}/${game.file}`, bytes);
          const report = detectGameServers({ dir: ROOT, env: {}, processes: [], places: {}, fs: memoryFiles(files) });
          assert.ok(report.detections.length <= 1);
          const password = report.detections[0]?.password?.reveal();
          if (password !== undefined) withPassword++;
          if (password === undefined || game.escapes.some((escape) => bytes.includes(escape))) return;
          assert.ok(password.length > 0);
          assert.ok(
            [...files.values()].some((file) => inFile(file, password)),
            `password not in the file: ${JSON.stringify(password)}`,
          );
        }),
        fcOptions({ numRuns: 200 }),
      );
      // The contents are built to reach the password setting often; a property that never saw a password would prove nothing.
      assert.ok(withPassword >= 10, `only ${withPassword} runs found a password`);
    });
  }

  test('every fix applies to any bytes without throwing', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.values(GAMES)), fc.uint8Array({ maxLength: 200 }), (game, noise) => {
        // Files whose settings need a fix, followed by noise: the fix must cope with whatever it finds.
        const files = new Map<string, Buffer>(
          Object.entries(game.beside ?? {}).map(([path, text]) => [`${ROOT}/${path}`, Buffer.from(text)]),
        );
        const needingFix = Buffer.from(game.shapes.map((shape) => shape('')).join('\n'));
        files.set(`${ROOT}/${game.file}`, needingFix);
        const report = detectGameServers({ dir: ROOT, env: {}, processes: [], places: {}, fs: memoryFiles(files) });
        for (const problem of report.detections.flatMap((detection) => detection.problems)) {
          const result = problem.fix?.apply(Buffer.concat([needingFix, Buffer.from(noise)]), 'Abcdefgh12345678');
          if (result) assert.ok(Buffer.isBuffer(result));
        }
      }),
      fcOptions({ numRuns: 200 }),
    );
  });
});

describe('Java properties, against how Properties.store writes a value', () => {
  test('any password written with the escapes Java uses is read back exactly', () => {
    const escape = (value: string) =>
      [...value]
        .map((c, index) => {
          if (c === '\\') return '\\\\';
          if (c === '\t') return '\\t';
          if (c === '\n') return '\\n';
          if (c === '\r') return '\\r';
          if (c === '\f') return '\\f';
          if ('=:#!'.includes(c)) return `\\${c}`;
          if (c === ' ' && index === 0) return '\\ ';
          return c;
        })
        .join('');
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }), (password) => {
        const text = `#Minecraft server properties\nenable-rcon=true\nrcon.password=${escape(password)}\nrcon.port=25575\n`;
        const files = new Map([[`${ROOT}/server.properties`, Buffer.from(text)]]);
        const report = detectGameServers({ dir: ROOT, env: {}, processes: [], places: {}, fs: memoryFiles(files) });
        assert.equal(report.detections[0]?.password?.reveal(), password);
      }),
      fcOptions({ numRuns: 300 }),
    );
  });
});
