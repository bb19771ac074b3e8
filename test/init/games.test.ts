import { inspect } from 'node:util';
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Secret } from '../../src/init/detect/secret.js';
import { detectIn, onlyDetection, problemCodes, Scratch } from './helpers.js';

describe('what each game means by its settings', () => {
  let scratch: Scratch;
  afterEach(() => scratch?.remove());

  /** Writes files into a fresh scratch folder and detects there. */
  function detectWith(files: Record<string, string | Uint8Array>, options: Parameters<typeof detectIn>[1] = {}) {
    scratch = new Scratch();
    for (const [path, content] of Object.entries(files)) scratch.write(path, content);
    return detectIn(scratch.path, options);
  }

  describe('Minecraft', () => {
    test('server-ip binds RCON; only "true" (any case) switches it on', () => {
      const detection = onlyDetection(
        detectWith({ 'server.properties': 'enable-rcon=TRUE\nrcon.password=pw123456\nserver-ip=10.0.0.5\n' }),
      );
      assert.deepEqual(detection.executor, { type: 'rcon', host: '10.0.0.5', port: 25575 });
      assert.deepEqual(problemCodes(detection), []);
      assert.deepEqual(problemCodes(onlyDetection(detectWith({ 'server.properties': 'enable-rcon=yes\nrcon.password=pw123456\n' }))), [
        'rcon-disabled',
      ]);
    });

    test('a port that is not a number: a warning, and the default', () => {
      const detection = onlyDetection(detectWith({ 'server.properties': 'enable-rcon=true\nrcon.password=pw123456\nrcon.port=25575x\n' }));
      assert.equal(detection.executor.port, 25575);
      assert.deepEqual(problemCodes(detection), ['port-invalid']);
      assert.deepEqual(detection.found[1], { setting: 'rcon.port', shown: '25575', source: 'default' });
    });

    test('a password that is not UTF-8 is not taken, and the user is told', () => {
      const bytes = Buffer.concat([Buffer.from('enable-rcon=true\nrcon.password=pw'), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]);
      const detection = onlyDetection(detectWith({ 'server.properties': bytes }));
      assert.equal(detection.password, undefined);
      assert.deepEqual(problemCodes(detection), ['password-missing', 'password-unreadable']);
    });

    test("Bedrock's server.properties and unrelated .properties files are not Minecraft Java's", () => {
      assert.deepEqual(
        detectWith({
          'server.properties': 'server-name=Dedicated Server\nserver-port=19132\nserver-portv6=19133\nlevel-name=Bedrock level\n',
        }).detections,
        [],
      );
      assert.deepEqual(detectWith({ 'server.properties': 'spring.datasource.url=jdbc:h2:mem\nserver.port=8080\n' }).detections, []);
    });
  });

  describe('itzg/minecraft-server', () => {
    const itzg = {
      'server.properties': 'enable-rcon=true\nrcon.password=abc123def456abc123def456\n',
      '.rcon-cli.env': 'password=abc123def456abc123def456\n',
    };

    test('its data folder warns that the password changes at every start', () => {
      const detection = onlyDetection(detectWith(itzg));
      assert.deepEqual(problemCodes(detection), ['password-changes-on-restart']);
      assert.match(detection.problems[0]!.message, /RCON_PASSWORD/);
    });

    test('no warning when RCON_PASSWORD (or RCON_PASSWORD_FILE) is set', () => {
      assert.deepEqual(problemCodes(onlyDetection(detectWith(itzg, { env: { RCON_PASSWORD: 'abc123def456abc123def456' } }))), []);
      assert.deepEqual(problemCodes(onlyDetection(detectWith(itzg, { env: { RCON_PASSWORD_FILE: '/run/secrets/rcon' } }))), []);
    });

    test('server.properties and .rcon-cli.env disagreeing: the one the server reads counts, with a warning', () => {
      const detection = onlyDetection(
        detectWith({ ...itzg, '.rcon-cli.env': 'password=newer000000000000000000\n' }, { env: { RCON_PASSWORD: 'x' } }),
      );
      assert.equal(detection.password?.reveal(), 'abc123def456abc123def456');
      assert.deepEqual(problemCodes(detection), ['password-mismatch']);
    });

    test('no server.properties but RCON_PASSWORD_FILE and RCON_PORT: a server known from the environment', () => {
      scratch = new Scratch();
      const secret = scratch.write('secrets/rcon_password', 'fromSecretFile1\n\n');
      const report = detectIn(scratch.path, { env: { RCON_PASSWORD_FILE: secret, RCON_PORT: '25580' } });
      const detection = onlyDetection(report);
      assert.equal(detection.game, 'minecraft');
      assert.equal(detection.executor.port, 25580);
      assert.equal(detection.password?.reveal(), 'fromSecretFile1');
      assert.deepEqual(detection.found, [
        { setting: 'RCON_PORT', shown: '25580', source: 'the environment' },
        { setting: 'RCON_PASSWORD_FILE', shown: 'set (15 characters)', source: './secrets/rcon_password' },
      ]);
    });

    test('ENABLE_RCON is on only for "true" or "on", as the image reads it', () => {
      const detection = onlyDetection(
        detectIn('/nonexistent/porter-test-folder', { env: { RCON_PASSWORD: 'pw123456', ENABLE_RCON: 'yes' } }),
      );
      assert.deepEqual(problemCodes(detection), ['rcon-disabled']);
      const on = onlyDetection(detectIn('/nonexistent/porter-test-folder', { env: { RCON_PASSWORD: 'pw123456', ENABLE_RCON: 'ON' } }));
      assert.deepEqual(problemCodes(on), []);
    });

    test("an itzg container's /data folder is searched when porter runs inside it", () => {
      scratch = new Scratch();
      scratch.write('data/server.properties', itzg['server.properties']);
      scratch.write('data/.rcon-cli.env', itzg['.rcon-cli.env']);
      const detection = onlyDetection(detectIn('/nonexistent/porter-test-folder', { places: { containerData: `${scratch.path}/data` } }));
      assert.equal(detection.settingsFile, `${scratch.path}/data/server.properties`);
    });
  });

  describe('Palworld', () => {
    test('the WindowsServer folder too; an unset option takes its default', () => {
      const detection = onlyDetection(
        detectWith({
          'Pal/Saved/Config/WindowsServer/PalWorldSettings.ini': 'OptionSettings=(RCONEnabled=True,AdminPassword="adminpw1")\r\n',
        }),
      );
      assert.equal(detection.executor.port, 25575);
      assert.deepEqual(detection.found[1], { setting: 'RCONPort', shown: '25575', source: 'default' });
      assert.deepEqual(problemCodes(detection), []);
    });

    test('a file with something else in it is not Palworld settings', () => {
      assert.deepEqual(detectWith({ 'Pal/Saved/Config/LinuxServer/PalWorldSettings.ini': 'hello\n' }).detections, []);
    });
  });

  describe('Rust', () => {
    test('rcon.web 0 is Source RCON; without rcon.port, server.port is taken, with a warning', () => {
      const detection = onlyDetection(
        detectWith({ 'server/x/cfg/server.cfg': 'server.port 28030\nrcon.web 0\nrcon.password "pw123456"\n' }),
      );
      assert.deepEqual(detection.executor, { type: 'rcon', host: '127.0.0.1', port: 28030 });
      assert.deepEqual(problemCodes(detection), ['port-assumed']);
    });

    test('one detection for each server identity', () => {
      const report = detectWith({
        'server/a/cfg/server.cfg': 'rcon.port 28016\nrcon.password "a1234567"\n',
        'server/b/cfg/server.cfg': 'rcon.port 28026\nrcon.password "b1234567"\n',
      });
      assert.deepEqual(
        report.detections.map((detection) => detection.executor.port),
        [28016, 28026],
      );
    });
  });

  describe('Source', () => {
    test('a server.cfg with Rust variables is not taken for Source', () => {
      assert.deepEqual(
        detectWith({ 'cfg/server.cfg': 'server.hostname "x"\nrcon.password "pw123456"\n' }).detections.map((detection) => detection.game),
        [],
      );
    });

    test('no rcon_password at all: an error with a fix', () => {
      const detection = onlyDetection(detectWith({ 'tf/cfg/server.cfg': 'hostname "tf"\n' }));
      assert.deepEqual(problemCodes(detection), ['password-missing', 'port-assumed']);
      assert.ok(detection.problems[0]!.fix);
    });
  });

  describe('Project Zomboid', () => {
    test('each server .ini is a detection; other files and other games’ .ini files are not', () => {
      const report = detectWith({
        'Zomboid/Server/first.ini': 'PVP=true\nRCONPort=27015\nRCONPassword=first123\n',
        'Zomboid/Server/second.ini': 'PVP=false\nRCONPort=27016\nRCONPassword=\n',
        'Zomboid/Server/first_SandboxVars.lua': 'SandboxVars = {}\n',
        'Zomboid/Server/notes.ini': '[Section]\nRCONPort=1\nPVP=true\n',
      });
      assert.deepEqual(
        report.detections.map((detection) => [detection.executor.port, problemCodes(detection)]),
        [
          [27015, []],
          [27016, ['password-empty']],
        ],
      );
    });
  });

  describe('7 Days to Die', () => {
    test('an empty TelnetPassword is usable on this machine: a warning with a fix, not an error', () => {
      const detection = onlyDetection(
        detectWith({ 'serverconfig.xml': '<ServerSettings><property name="TelnetPassword" value=""/></ServerSettings>' }),
      );
      assert.equal(detection.executor.port, 8081);
      assert.equal(detection.password, undefined);
      assert.deepEqual(problemCodes(detection), ['telnet-loopback-only']);
      assert.equal(detection.problems[0]!.severity, 'warning');
      assert.ok(detection.problems[0]!.fix?.setsPassword);
    });
  });

  describe('BattlEye (DayZ, Arma 3)', () => {
    test("the running server's _active_ copy is the one read; RConIP binds the host", () => {
      const detection = onlyDetection(
        detectWith({
          'serverDZ.cfg': '',
          'battleye/BEServer_x64.cfg': 'RConPassword stale123\nRConPort 2305\nRestrictRCon 0\n',
          'battleye/BEServer_x64_active_4f2a.cfg': 'RConPassword active12\nRConPort 2305\nRConIP 192.168.1.9\nRestrictRCon 0\n',
        }),
      );
      assert.equal(detection.password?.reveal(), 'active12');
      assert.equal(detection.executor.host, '192.168.1.9');
    });

    test('a profiles/BattlEye folder; RestrictRCon unset means restricted', () => {
      const detection = onlyDetection(
        detectWith({ 'DayZServer_x64.exe': '', 'profiles/BattlEye/BEServer_x64.cfg': 'RConPassword pw123456\nRConPort 2305\n' }),
      );
      assert.equal(detection.game, 'dayz');
      assert.deepEqual(problemCodes(detection), ['rcon-restricted']);
    });

    test('no DayZ or Arma 3 program nearby: reported once, as DayZ, with a warning', () => {
      const detection = onlyDetection(
        detectWith({ 'battleye/BEServer_x64.cfg': 'RConPassword pw123456\nRConPort 2305\nRestrictRCon 0\n' }),
      );
      assert.equal(detection.game, 'dayz');
      assert.deepEqual(problemCodes(detection), ['game-uncertain']);
    });
  });

  describe('Terraria (TShock)', () => {
    test("of several tokens, the superadmin group's; TShock 4's flat file too", () => {
      const config = {
        RestApiEnabled: true,
        ApplicationRestTokens: { first: { UserGroupName: 'guest' }, second1: { Username: 'a', UserGroupName: 'superadmin' } },
      };
      const detection = onlyDetection(detectWith({ 'tshock/config.json': JSON.stringify(config) }));
      assert.equal(detection.password?.reveal(), 'second1');
      assert.equal(detection.executor.port, 7878);
      assert.deepEqual(problemCodes(detection), []);
    });
  });
});

describe('Secret', () => {
  test('only reveal() gives the value', () => {
    const secret = new Secret('hunter22');
    assert.equal(secret.reveal(), 'hunter22');
    assert.equal(String(secret), '[hidden]');
    assert.equal(JSON.stringify({ secret }), '{"secret":"[hidden]"}');
    assert.equal(inspect({ secret }), '{ secret: Secret([hidden]) }');
    assert.equal(secret.describe(), 'set (8 characters)');
    assert.equal(new Secret('\u{1F600}').describe(), 'set (1 character)');
  });
});
