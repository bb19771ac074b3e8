import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { FixPasswordError } from '../../src/init/detect/fix.js';
import { generatePassword } from '../../src/init/detect/password.js';
import type { Detection, Fix } from '../../src/init/detect/types.js';
import { detectIn, onlyDetection, problemCodes, Scratch } from './helpers.js';

const PASSWORD = 'NewPassw0rdFromTest24ch';

/** The one fix a detection offers (every problem that has one offers the same edit). */
function fixOf(detection: Detection): Fix {
  const fixes = [...new Set(detection.problems.flatMap((problem) => (problem.fix ? [problem.fix] : [])))];
  assert.equal(fixes.length, 1, `expected one fix, got ${fixes.length}: ${problemCodes(detection).join(', ')}`);
  return fixes[0]!;
}

/** Applies the detection's fix to its file as the caller would: read now, apply, write. */
function applyFix(detection: Detection, password = PASSWORD): { before: Buffer; after: Buffer } {
  const fix = fixOf(detection);
  const before = existsSync(fix.file) ? readFileSync(fix.file) : Buffer.alloc(0);
  const after = fix.apply(before, password);
  writeFileSync(fix.file, after);
  return { before, after };
}

/** The lines that differ between two texts of the same line count. */
function changedLines(before: string, after: string): [string, string][] {
  const a = before.split('\n');
  const b = after.split('\n');
  assert.equal(a.length, b.length, 'the edit added or removed lines');
  return a.flatMap((line, index) => (line === b[index] ? [] : [[line, b[index]!] as [string, string]]));
}

describe('fixes', () => {
  let scratch: Scratch;
  afterEach(() => scratch.remove());

  test('Minecraft with RCON off and no password: two values change, every other byte stays', () => {
    scratch = new Scratch();
    const detection = onlyDetection(detectIn(scratch.copyOf('minecraft-rcon-off')));
    const fix = fixOf(detection);
    assert.equal(fix.setsPassword, true);
    assert.equal(fix.summary, 'set enable-rcon=true and a new rcon.password in ./server.properties');
    assert.ok(!fix.summary.includes(PASSWORD));
    const { before, after } = applyFix(detection);
    assert.deepEqual(changedLines(before.toString('latin1'), after.toString('latin1')), [
      ['enable-rcon=false', 'enable-rcon=true'],
      ['rcon.password=', `rcon.password=${PASSWORD}`],
    ]);
    const fixed = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(fixed), []);
    assert.equal(fixed.password?.reveal(), PASSWORD);
  });

  test('Palworld with RCON off: the two options change inside the one OptionSettings line', () => {
    scratch = new Scratch();
    const detection = onlyDetection(detectIn(scratch.copyOf('palworld-rcon-off')));
    const { before, after } = applyFix(detection);
    const expected = before
      .toString('latin1')
      .replace('RCONEnabled=False', 'RCONEnabled=True')
      .replace('AdminPassword=""', `AdminPassword="${PASSWORD}"`);
    assert.equal(after.toString('latin1'), expected);
    const fixed = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(fixed), []);
    assert.equal(fixed.password?.reveal(), PASSWORD);
  });

  test("Palworld's empty first-start file gets the section and the three options", () => {
    scratch = new Scratch();
    scratch.write('Pal/Saved/Config/LinuxServer/PalWorldSettings.ini', '');
    const detection = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(detection), ['rcon-disabled', 'password-missing']);
    const { after } = applyFix(detection);
    assert.equal(
      after.toString(),
      `[/Script/Pal.PalGameWorldSettings]\nOptionSettings=(RCONEnabled=True,RCONPort=25575,AdminPassword="${PASSWORD}")\n`,
    );
    assert.deepEqual(problemCodes(onlyDetection(detectIn(scratch.path))), []);
  });

  test('missing keys are added as new last lines, in the line breaks the file uses', () => {
    scratch = new Scratch();
    scratch.write('server.properties', '#Minecraft server properties\r\nmotd=A Minecraft Server\r\nserver-port=25565');
    const { after } = applyFix(onlyDetection(detectIn(scratch.path)));
    assert.equal(
      after.toString(),
      `#Minecraft server properties\r\nmotd=A Minecraft Server\r\nserver-port=25565\r\nenable-rcon=true\r\nrcon.password=${PASSWORD}\r\n`,
    );
  });

  test('a byte order mark and bytes that are not UTF-8 elsewhere in the file are kept', () => {
    scratch = new Scratch();
    const original = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('motd=caf'),
      Buffer.from([0xe9, 0xff]),
      Buffer.from('\nenable-rcon=false\nrcon.password=\n'),
    ]);
    scratch.write('server.properties', original);
    const { after } = applyFix(onlyDetection(detectIn(scratch.path)));
    const expected = Buffer.concat([original.subarray(0, 13), Buffer.from(`\nenable-rcon=true\nrcon.password=${PASSWORD}\n`)]);
    assert.deepEqual(after, expected);
  });

  test('ARK: a missing RCONEnabled goes under [ServerSettings], after its last key', () => {
    scratch = new Scratch();
    const file = 'ShooterGame/Saved/Config/WindowsServer/GameUserSettings.ini';
    scratch.write(file, '[ServerSettings]\nServerAdminPassword=adminpw1\nRCONPort=27020\n\n[SessionSettings]\nSessionName=x\n');
    const detection = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(detection), ['rcon-disabled']);
    assert.equal(fixOf(detection).setsPassword, false);
    const { after } = applyFix(detection);
    assert.equal(
      after.toString(),
      '[ServerSettings]\nServerAdminPassword=adminpw1\nRCONPort=27020\nRCONEnabled=True\n\n[SessionSettings]\nSessionName=x\n',
    );
  });

  test('ARK: a UTF-16 file written on Windows stays UTF-16, byte order mark included', () => {
    scratch = new Scratch();
    const text = '[ServerSettings]\r\nRCONEnabled=False\r\nServerAdminPassword=adminpw1\r\n';
    const file = scratch.write(
      'ShooterGame/Saved/Config/WindowsServer/GameUserSettings.ini',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
    );
    const detection = onlyDetection(detectIn(scratch.path));
    assert.equal(detection.password?.reveal(), 'adminpw1');
    applyFix(detection);
    assert.deepEqual(readFileSync(file), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text.replace('False', 'True'), 'utf16le')]));
  });

  test('Conan: RconPassword set in a CRLF file, nothing else touched', () => {
    scratch = new Scratch();
    const file = 'ConanSandbox/Saved/Config/WindowsServer/Game.ini';
    scratch.write(file, '[RconPlugin]\r\nRconEnabled=1\r\nRconPassword=\r\nRconPort=25575\r\n');
    const { after } = applyFix(onlyDetection(detectIn(scratch.path)));
    assert.equal(after.toString(), `[RconPlugin]\r\nRconEnabled=1\r\nRconPassword=${PASSWORD}\r\nRconPort=25575\r\n`);
  });

  test('Conan: a Game.ini without [RconPlugin] gets the section at its end', () => {
    scratch = new Scratch();
    scratch.write('ConanSandbox/Saved/Config/WindowsServer/Game.ini', '[/Script/Engine.GameSession]\nMaxPlayers=40\n');
    const detection = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(detection), ['rcon-disabled', 'password-missing']);
    const { after } = applyFix(detection);
    assert.equal(
      after.toString(),
      `[/Script/Engine.GameSession]\nMaxPlayers=40\n\n[RconPlugin]\nRconEnabled=1\nRconPassword=${PASSWORD}\n`,
    );
  });

  test('Zomboid, Squad, Rust and Source: the empty password gets a value in place', () => {
    const cases: [string, string, string][] = [
      [
        'Zomboid/Server/servertest.ini',
        '# RCON password\nRCONPassword=\nRCONPort=27015\nPVP=true\n',
        `# RCON password\nRCONPassword=${PASSWORD}\nRCONPort=27015\nPVP=true\n`,
      ],
      [
        'SquadGame/ServerConfig/Rcon.cfg',
        '// comment\r\nIP=0.0.0.0\r\nPort=21114\r\nPassword=\r\n',
        `// comment\r\nIP=0.0.0.0\r\nPort=21114\r\nPassword=${PASSWORD}\r\n`,
      ],
      [
        'server/my_server_identity/cfg/server.cfg',
        'server.hostname "x"\nrcon.password ""\n',
        `server.hostname "x"\nrcon.password "${PASSWORD}"\n`,
      ],
      ['game/csgo/cfg/server.cfg', 'hostname "x" // name\nrcon_password\n', `hostname "x" // name\nrcon_password "${PASSWORD}"\n`],
      ['csgo/cfg/server.cfg', 'hostname "x"', `hostname "x"\nrcon_password "${PASSWORD}"\n`],
    ];
    for (const [file, text, expected] of cases) {
      scratch = new Scratch();
      scratch.write(file, text);
      const { after } = applyFix(onlyDetection(detectIn(scratch.path)));
      assert.equal(after.toString(), expected, file);
      assert.equal(onlyDetection(detectIn(scratch.path)).password?.reveal(), PASSWORD, file);
      scratch.remove();
    }
    scratch = new Scratch();
  });

  test('7 Days to Die: telnet switched on, and a password added before </ServerSettings> when the property is missing', () => {
    scratch = new Scratch();
    scratch.write(
      'serverconfig.xml',
      '<?xml version="1.0"?>\n<ServerSettings>\n\t<property name="TelnetEnabled" value="false"/>\n\t<property name="TelnetPort" value="8081"/>\n</ServerSettings>\n',
    );
    const detection = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(detection), ['rcon-disabled', 'telnet-loopback-only']);
    const { after } = applyFix(detection);
    assert.equal(
      after.toString(),
      `<?xml version="1.0"?>\n<ServerSettings>\n\t<property name="TelnetEnabled" value="true"/>\n\t<property name="TelnetPort" value="8081"/>\n\t<property name="TelnetPassword" value="${PASSWORD}"/>\n</ServerSettings>\n`,
    );
    assert.deepEqual(problemCodes(onlyDetection(detectIn(scratch.path))), []);
  });

  test('BattlEye: password and RConPort added to a CRLF file', () => {
    scratch = new Scratch();
    scratch.write('serverDZ.cfg', 'hostname = "x";\r\n');
    scratch.write('battleye/BEServer_x64.cfg', 'RestrictRCon 0\r\n');
    const detection = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(detection), ['password-missing', 'port-missing']);
    const { after } = applyFix(detection);
    assert.equal(after.toString(), `RestrictRCon 0\r\nRConPassword ${PASSWORD}\r\nRConPort 2305\r\n`);
    const fixed = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(fixed), []);
    assert.equal(fixed.executor.port, 2305);
  });

  test('TShock: REST API switched on and a token added; the file stays valid JSON', () => {
    scratch = new Scratch();
    scratch.write(
      'tshock/config.json',
      '{\n  "Settings": {\n    "RestApiEnabled": false,\n    "RestApiPort": 7878,\n    "ApplicationRestTokens": {}\n  }\n}\n',
    );
    const detection = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(detection), ['rcon-disabled', 'token-missing']);
    const { after } = applyFix(detection);
    assert.deepEqual(JSON.parse(after.toString()), {
      Settings: {
        RestApiEnabled: true,
        RestApiPort: 7878,
        ApplicationRestTokens: { [PASSWORD]: { Username: 'porter', UserGroupName: 'superadmin' } },
      },
    });
    const fixed = onlyDetection(detectIn(scratch.path));
    assert.deepEqual(problemCodes(fixed), []);
    assert.equal(fixed.password?.reveal(), PASSWORD);
  });

  test('a fix edits the file as it is when applied: a password set since detection is kept', () => {
    scratch = new Scratch();
    const detection = onlyDetection(detectIn(scratch.copyOf('minecraft-rcon-off')));
    const file = fixOf(detection).file;
    writeFileSync(file, readFileSync(file, 'latin1').replace('rcon.password=', 'rcon.password=setMeanwhile1'), 'latin1');
    applyFix(detection);
    const fixed = onlyDetection(detectIn(scratch.path));
    assert.equal(fixed.password?.reveal(), 'setMeanwhile1');
    assert.deepEqual(problemCodes(fixed), []);
  });

  test('a password that is not 8 to 32 letters and digits is refused, without being echoed', () => {
    scratch = new Scratch();
    const fix = fixOf(onlyDetection(detectIn(scratch.copyOf('minecraft-rcon-off'))));
    for (const bad of ['short', 'has space in it', 'quote"inside1', 'line\nbreak12', 'x'.repeat(33)]) {
      assert.throws(
        () => fix.apply(Buffer.from(''), bad),
        (error: unknown) => error instanceof FixPasswordError && error.code === 'E_FIX_PASSWORD' && !error.message.includes(bad),
      );
    }
  });

  test('the fix is pure: the same input gives the same output, and the file on disk is not touched', () => {
    scratch = new Scratch();
    const detection = onlyDetection(detectIn(scratch.copyOf('minecraft-rcon-off')));
    const fix = fixOf(detection);
    const before = readFileSync(fix.file);
    assert.deepEqual(fix.apply(before, PASSWORD), fix.apply(before, PASSWORD));
    assert.deepEqual(readFileSync(fix.file), before);
  });
});

describe('generatePassword', () => {
  test('24 letters and digits, accepted by every fix', () => {
    const password = generatePassword();
    assert.match(password, /^[A-Za-z0-9]{24}$/);
    assert.notEqual(generatePassword(), password);
  });

  test('bytes past the last whole alphabet are skipped, so every character is equally likely', () => {
    let calls = 0;
    const random = (size: number) => {
      calls++;
      // 248..255 would favour the first characters; they must be dropped.
      return Uint8Array.from({ length: size }, (_, index) => (index % 2 === 0 ? 250 : index % 62));
    };
    // Each batch of 32 bytes gives 16 usable ones: 1, 3, 5, … 31, that is B, D, F, … f.
    assert.equal(generatePassword(random), 'BDFHJLNPRTVXZbdfBDFHJLNP');
    assert.equal(calls, 2);
  });
});
