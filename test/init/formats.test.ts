import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { commandLineOptions } from '../../src/init/detect/command-line.js';
import { lastBattleyeSetting, parseBattleyeCfg } from '../../src/init/detect/formats/battleye-cfg.js';
import { lastConvar, parseConvars } from '../../src/init/detect/formats/convar-cfg.js';
import { findIni, parseIni } from '../../src/init/detect/formats/ini.js';
import { lastProperty, parseProperties } from '../../src/init/detect/formats/java-properties.js';
import { findPalworldOption, parsePalworldSettings } from '../../src/init/detect/formats/palworld-settings.js';
import { lastXmlProperty, parseServerConfigXml } from '../../src/init/detect/formats/serverconfig-xml.js';
import { parseTshockConfig } from '../../src/init/detect/formats/tshock-config.js';
import { decodeSettings, valueText } from '../../src/init/detect/text.js';

/** The raw text a parser marked as a value, to check the span an edit would replace. */
const span = (text: string, entry: { valueStart: number; valueEnd: number }) => text.slice(entry.valueStart, entry.valueEnd);

describe('Java properties (server.properties)', () => {
  test('separators, blanks, comments, and the last of two equal keys', () => {
    const text = '# comment\n! also a comment\nrcon.port = 25576\nmotd:Hello world\nkey value\nrcon.port=25577\n  \n';
    const entries = parseProperties(text);
    assert.deepEqual(
      entries.map((entry) => [entry.key, entry.value]),
      [
        ['rcon.port', '25576'],
        ['motd', 'Hello world'],
        ['key', 'value'],
        ['rcon.port', '25577'],
      ],
    );
    assert.equal(span(text, lastProperty(entries, 'rcon.port')!), '25577');
  });

  test('escapes, as Properties.store writes them, and continued lines', () => {
    const text = 'level-type=minecraft\\:normal\nrcon.password=a\\=b\\\\c\\u00e9\\t\nmotd=first \\\n    second\nend=\\\n';
    const entries = parseProperties(text);
    assert.equal(lastProperty(entries, 'level-type')?.value, 'minecraft:normal');
    assert.equal(lastProperty(entries, 'rcon.password')?.value, 'a=b\\c\u00e9\t');
    const motd = lastProperty(entries, 'motd')!;
    assert.equal(motd.value, 'first second');
    assert.equal(span(text, motd), 'first \\\n    second');
    assert.equal(lastProperty(entries, 'end')?.value, '');
  });

  test('a comment line ending in a backslash does not continue', () => {
    assert.deepEqual(
      parseProperties('# not continued \\\nrcon.port=1\n').map((entry) => entry.key),
      ['rcon.port'],
    );
  });
});

describe('key=value ini files', () => {
  test('sections, comments of the kind given, quoted values, keys without case', () => {
    const text = '; comment\n[ServerSettings]\nRCONPort = 27021 \nServerAdminPassword="with \\"quote\\""\n[Other]\nRCONPort=1\n';
    const ini = parseIni(text, { comments: [';'] });
    assert.equal(findIni(ini, 'serversettings', 'rconport', 'first')?.value, '27021');
    assert.equal(findIni(ini, 'ServerSettings', 'ServerAdminPassword', 'first')?.value, 'with "quote"');
    assert.equal(findIni(ini, undefined, 'RCONPort', 'last')?.value, '1');
    assert.equal(span(text, findIni(ini, 'ServerSettings', 'RCONPort', 'first')!), '27021');
  });

  test("Squad's // comments; lines without = are ignored", () => {
    const ini = parseIni('// Port=1\nPort=21114\njunk line\n=nokey\n', { comments: ['//'] });
    assert.deepEqual(
      ini.entries.map((entry) => [entry.key, entry.value]),
      [['Port', '21114']],
    );
  });
});

describe("Palworld's OptionSettings", () => {
  test('quoted strings holding commas and parentheses, nested lists, bare values', () => {
    const text =
      '[/Script/Pal.PalGameWorldSettings]\nOptionSettings=(ServerName="A, (b)",CrossplayPlatforms=(Steam,Xbox),AdminPassword="pw\\"1",RCONEnabled=True,RCONPort=25575)\n';
    const settings = parsePalworldSettings(text)!;
    assert.deepEqual(
      settings.options.map((option) => [option.key, option.value]),
      [
        ['ServerName', 'A, (b)'],
        ['CrossplayPlatforms', '(Steam,Xbox)'],
        ['AdminPassword', 'pw"1'],
        ['RCONEnabled', 'True'],
        ['RCONPort', '25575'],
      ],
    );
    assert.equal(span(text, findPalworldOption(settings, 'adminpassword')!), '"pw\\"1"');
    assert.equal(text[settings.closeAt], ')');
  });

  test('no list, or a list cut short, is no settings', () => {
    assert.equal(parsePalworldSettings('[/Script/Pal.PalGameWorldSettings]\n'), undefined);
    assert.equal(parsePalworldSettings('OptionSettings=(A=1,B="unclosed)\n'), undefined);
    assert.equal(parsePalworldSettings('OptionSettings=(A=1,B=2\n'), undefined);
  });
});

describe('console variable files (server.cfg)', () => {
  test('quoted and bare values, ; between statements, // comments, names without case', () => {
    const text = 'hostname "My // Server"; RCON_PASSWORD secret // comment\nrcon.port 28016\n// rcon.port 1\nsv_lan\n';
    const convars = parseConvars(text);
    assert.equal(lastConvar(convars, 'hostname')?.value, 'My // Server');
    assert.equal(lastConvar(convars, 'rcon_password')?.value, 'secret');
    assert.equal(lastConvar(convars, 'rcon.port')?.value, '28016');
    assert.equal(lastConvar(convars, 'sv_lan')?.value, '');
    assert.equal(span(text, lastConvar(convars, 'hostname')!), '"My // Server"');
  });
});

describe('BattlEye config', () => {
  test('Name value lines, names without case, the last one wins', () => {
    const settings = parseBattleyeCfg('RConPassword first\r\nrconpassword  second extra\r\nRConPort 2306\r\n// RConPort 1\r\n');
    assert.equal(lastBattleyeSetting(settings, 'RConPassword')?.value, 'second');
    assert.equal(lastBattleyeSetting(settings, 'RConPort')?.value, '2306');
  });
});

describe("7 Days to Die's serverconfig.xml", () => {
  test('comments count for nothing; entities and both quotes are read; > inside a value is fine', () => {
    const text = `<ServerSettings>
  <!-- <property name="TelnetPassword" value="commented"/> -->
  <property name="TelnetPassword" value="a&amp;b&#x41;&#66;"/>
  <property value='8082' name='TelnetPort' />
  <property name="ServerName" value="x > y"/>
</ServerSettings>`;
    const properties = parseServerConfigXml(text);
    assert.equal(lastXmlProperty(properties, 'TelnetPassword')?.value, 'a&bAB');
    assert.equal(span(text, lastXmlProperty(properties, 'TelnetPassword')!), 'a&amp;b&#x41;&#66;');
    assert.equal(lastXmlProperty(properties, 'TelnetPort')?.value, '8082');
    assert.equal(lastXmlProperty(properties, 'ServerName')?.value, 'x > y');
  });

  test('a value an XML parser would reject is not taken', () => {
    assert.equal(lastXmlProperty(parseServerConfigXml('<property name="TelnetPassword" value="a & b"/>'), 'TelnetPassword'), undefined);
    assert.equal(lastXmlProperty(parseServerConfigXml('<property name="TelnetPassword" value="&nope;"/>'), 'TelnetPassword'), undefined);
  });
});

describe("TShock's config.json", () => {
  test('TShock 5 nests the settings, TShock 4 does not', () => {
    const tokens = { tok: { Username: 'u', UserGroupName: 'superadmin' } };
    const nested = parseTshockConfig(
      JSON.stringify({ Settings: { RestApiEnabled: true, RestApiPort: 7879, ApplicationRestTokens: tokens } }),
    );
    const flat = parseTshockConfig(JSON.stringify({ RestApiEnabled: true, RestApiPort: 7879, ApplicationRestTokens: tokens }));
    const expected = { restApiEnabled: true, restApiPort: 7879, tokens: [{ token: 'tok', username: 'u', group: 'superadmin' }] };
    assert.deepEqual(nested, expected);
    assert.deepEqual(flat, expected);
  });

  test('not JSON, or not an object: no config', () => {
    assert.equal(parseTshockConfig('{"a":'), undefined);
    assert.equal(parseTshockConfig('[1,2]'), undefined);
  });
});

describe('command lines', () => {
  test('every form the games use, names without case, the last value winning', () => {
    const options = commandLineOptions([
      'server',
      '+rcon.port',
      '28016',
      '-port=2302',
      '-game',
      'csgo',
      '-batchmode',
      '-nographics',
      'RCONPORT=21114',
      'TheIsland?listen?ServerAdminPassword="a b"?RCONPort=27020',
      '+rcon.port',
      '28017',
    ]);
    const values = Object.fromEntries([...options].map(([name, option]) => [name, [option.shown, option.value]]));
    assert.deepEqual(values, {
      'rcon.port': ['+rcon.port', '28017'],
      port: ['-port', '2302'],
      game: ['-game', 'csgo'],
      rconport: ['?RCONPort', '27020'],
      serveradminpassword: ['?ServerAdminPassword', 'a b'],
    });
  });
});

describe('settings text', () => {
  test('bytes map one to one; a value is UTF-8, or nothing when it is not', () => {
    const settings = decodeSettings(Buffer.from([0xef, 0xbb, 0xbf, 0x61, 0xc3, 0xa9, 0xff]));
    assert.equal(settings.text.length, 4);
    assert.equal(valueText(settings, settings.text.slice(0, 3)), 'a\u00e9');
    assert.equal(valueText(settings, settings.text), undefined);
  });

  test('UTF-16 after its byte order mark; an odd length is read byte by byte', () => {
    assert.equal(decodeSettings(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('k=v', 'utf16le')])).text, 'k=v');
    assert.equal(decodeSettings(Buffer.from([0xff, 0xfe, 0x61])).encoding, 'latin1');
  });
});
