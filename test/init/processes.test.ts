import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { FileSeam } from '../../src/init/detect/files.js';
import { SERVER_PROGRAMS } from '../../src/init/detect/detect.js';
import { readProcesses, splitCmdline } from '../../src/init/detect/processes.js';
import { recognise } from '../../src/init/detect/recognise.js';
import type { ProcessInfo } from '../../src/init/detect/types.js';
import { detectIn, gameDir, onlyDetection, problemCodes, Scratch } from './helpers.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(code), { code });
}

const proc = (pid: number, argv: string[], cwd?: string, exe?: string): ProcessInfo => ({ pid, argv, cwd, exe });

describe('recognise: game servers by their command lines', () => {
  const cases: [string, ProcessInfo, { game: string; dirs: string[]; options?: Record<string, string> } | undefined][] = [
    [
      'Rust, with its console variables',
      proc(
        101,
        [
          '/srv/rust/RustDedicated',
          '-batchmode',
          '+server.port',
          '28015',
          '+server.identity',
          'main',
          '+rcon.port',
          '28016',
          '+rcon.password',
          'two words',
          '+rcon.web',
          '1',
        ],
        '/srv/rust',
        '/srv/rust/RustDedicated',
      ),
      {
        game: 'rust',
        dirs: ['/srv/rust'],
        options: { 'server.identity': 'main', 'rcon.port': '28016', 'rcon.password': 'two words', 'rcon.web': '1' },
      },
    ],
    [
      'a Minecraft server jar',
      proc(102, ['java', '-Xmx2G', '-jar', 'paper-1.20.4.jar', 'nogui'], '/srv/mc'),
      { game: 'minecraft', dirs: ['/srv/mc'] },
    ],
    [
      "a Forge server's argument file",
      proc(103, ['/usr/bin/java', '@user_jvm_args.txt', '@libraries/net/minecraftforge/forge/1.20.1-47.2.0/unix_args.txt'], '/srv/forge'),
      { game: 'minecraft', dirs: ['/srv/forge'] },
    ],
    ['another Java program', proc(104, ['java', '-cp', 'lib/*', 'org.example.Main'], '/opt/app'), undefined],
    [
      'Palworld: the server root is three folders above the binary',
      proc(
        105,
        ['/home/steam/pal/Pal/Binaries/Linux/PalServer-Linux-Shipping', 'Pal', '-port=8211', '-RCONPort=25580'],
        '/home/steam/pal',
        '/home/steam/pal/Pal/Binaries/Linux/PalServer-Linux-Shipping',
      ),
      { game: 'palworld', dirs: ['/home/steam/pal'], options: { port: '8211', rconport: '25580' } },
    ],
    [
      "ARK's map URL",
      proc(
        106,
        [
          './ShooterGameServer',
          'TheIsland?listen?SessionName="My Server"?RCONEnabled=True?RCONPort=27021?ServerAdminPassword=adminpw1',
          '-server',
          '-log',
        ],
        '/ark/ShooterGame/Binaries/Linux',
      ),
      {
        game: 'ark',
        dirs: ['/ark', '/ark/ShooterGame/Binaries/Linux'],
        options: { sessionname: 'My Server', rconenabled: 'True', rconport: '27021', serveradminpassword: 'adminpw1' },
      },
    ],
    [
      'srcds with -game and +rcon_password',
      proc(107, ['./srcds_linux', '-game', 'csgo', '-console', '-usercon', '-port', '27016', '+rcon_password', 'pw'], '/srv/csgo'),
      { game: 'source', dirs: ['/srv/csgo'], options: { game: 'csgo', port: '27016', rcon_password: 'pw' } },
    ],
    [
      'a CS2 dedicated server',
      proc(108, ['/cs2/game/bin/linuxsteamrt64/cs2', '-dedicated', '+map', 'de_dust2'], '/cs2/game/bin/linuxsteamrt64'),
      { game: 'source', dirs: ['/cs2', '/cs2/game/bin/linuxsteamrt64'] },
    ],
    ['the CS2 game client', proc(109, ['/cs2/game/bin/linuxsteamrt64/cs2', '-steam'], '/cs2'), undefined],
    [
      '7 Days to Die with -configfile',
      proc(
        110,
        [
          './7DaysToDieServer.x86_64',
          '-logfile',
          '/dev/null',
          '-quit',
          '-batchmode',
          '-nographics',
          '-configfile=serverconfig.xml',
          '-dedicated',
        ],
        '/srv/7dtd',
      ),
      { game: '7dtd', dirs: ['/srv/7dtd'], options: { configfile: 'serverconfig.xml' } },
    ],
    [
      'DayZ with -BEpath and -profiles',
      proc(111, ['./DayZServer', '-config=serverDZ.cfg', '-port=2302', '-BEpath=battleye', '-profiles=profiles'], '/srv/dayz'),
      { game: 'dayz', dirs: ['/srv/dayz'], options: { port: '2302', bepath: 'battleye', profiles: 'profiles' } },
    ],
    ['Arma 3', proc(112, ['./arma3server_x64', '-port=2302', '-config=server.cfg'], '/srv/arma3'), { game: 'arma3', dirs: ['/srv/arma3'] }],
    [
      'Conan under Wine, named by its Windows path',
      proc(
        113,
        ['Z:\\home\\steam\\conan\\ConanSandbox\\Binaries\\Win64\\ConanSandboxServer-Win64-Shipping.exe', '-log'],
        '/home/steam/conan',
        '/usr/lib/wine/wine64-preloader',
      ),
      { game: 'conan', dirs: ['/home/steam/conan'] },
    ],
    [
      'TShock under mono',
      proc(114, ['mono', '--server', 'TerrariaServer.exe', '-port', '7777'], '/srv/terraria'),
      { game: 'terraria', dirs: ['/srv/terraria'] },
    ],
    [
      'Project Zomboid with -servername and -cachedir',
      proc(115, ['./ProjectZomboid64', '-servername', 'myserver', '-cachedir=/srv/pzdata'], '/srv/pz'),
      { game: 'zomboid', dirs: ['/srv/pz'], options: { servername: 'myserver', cachedir: '/srv/pzdata' } },
    ],
    [
      'Squad',
      proc(116, ['/squad/SquadGame/Binaries/Linux/SquadGameServer', 'Port=7787', 'RCONPORT=21115', 'RCONPASSWORD=sq'], '/squad'),
      { game: 'squad', dirs: ['/squad'], options: { rconport: '21115', rconpassword: 'sq' } },
    ],
    ['a shell', proc(117, ['-bash'], '/root'), undefined],
    ['a kernel thread', proc(118, [], undefined), undefined],
  ];
  for (const [name, process, expected] of cases) {
    test(name, () => {
      const hint = recognise(process, SERVER_PROGRAMS);
      if (!expected) {
        assert.equal(hint, undefined);
        return;
      }
      assert.ok(hint, 'not recognised');
      assert.equal(hint.game, expected.game);
      assert.deepEqual(hint.dirs, expected.dirs);
      assert.equal(hint.pid, process.pid);
      for (const [key, value] of Object.entries(expected.options ?? {})) assert.equal(hint.options.get(key)?.value, value, key);
    });
  }
});

describe('detection from running processes', () => {
  let scratch: Scratch;
  afterEach(() => scratch?.remove());

  test("Rust: the command line's port and password win over server.cfg, and the line says so", () => {
    scratch = new Scratch();
    scratch.write('server/main/cfg/server.cfg', 'server.hostname "x"\nrcon.port 28016\nrcon.password "fromFile1"\n');
    const rust = proc(
      4242,
      [`${scratch.path}/RustDedicated`, '+server.identity', 'main', '+rcon.port', '28020', '+rcon.password', 'fromLine1', '+rcon.web', '0'],
      scratch.path,
    );
    const detection = onlyDetection(detectIn('/nonexistent-folder-for-this-test', { processes: [rust] }));
    assert.equal(detection.game, 'rust');
    assert.deepEqual(detection.executor, { type: 'rcon', host: '127.0.0.1', port: 28020 });
    assert.equal(detection.password?.reveal(), 'fromLine1');
    assert.deepEqual(detection.process, { pid: 4242, name: 'RustDedicated' });
    assert.deepEqual(detection.found, [
      { setting: '+rcon.port', shown: '28020', source: 'the command line of RustDedicated (pid 4242)' },
      { setting: '+rcon.password', shown: 'set (9 characters)', source: 'the command line of RustDedicated (pid 4242)' },
    ]);
  });

  test('a running server whose folder is also the folder given is reported once, as running', () => {
    scratch = new Scratch();
    const dir = scratch.copyOf('minecraft');
    const java = proc(77, ['java', '-jar', 'server.jar', 'nogui'], dir);
    const detection = onlyDetection(detectIn(dir, { processes: [java] }));
    assert.deepEqual(detection.process, { pid: 77, name: 'java' });
    assert.equal(detection.password?.reveal(), 'mcFixtureRcon25575');
  });

  test('ARK known only from its command line', () => {
    const ark = proc(
      88,
      [
        '/nowhere/ShooterGame/Binaries/Linux/ShooterGameServer',
        'TheIsland?listen?RCONEnabled=True?RCONPort=27021?ServerAdminPassword=adminpw1',
      ],
      '/nowhere',
    );
    const detection = onlyDetection(detectIn('/nonexistent-folder-for-this-test', { processes: [ark] }));
    assert.equal(detection.game, 'ark');
    assert.equal(detection.executor.port, 27021);
    assert.equal(detection.password?.reveal(), 'adminpw1');
    assert.deepEqual(problemCodes(detection), []);
    assert.equal(detection.settingsFile, undefined);
  });

  test('7 Days to Die reads the -configfile it was started with, relative to its folder', () => {
    scratch = new Scratch();
    scratch.write(
      'configs/mine.xml',
      '<ServerSettings><property name="TelnetPort" value="8090"/><property name="TelnetPassword" value="telnetpw1"/></ServerSettings>',
    );
    const server = proc(99, ['./7DaysToDieServer.x86_64', '-configfile=configs/mine.xml'], scratch.path);
    const detection = onlyDetection(detectIn('/nonexistent-folder-for-this-test', { processes: [server] }));
    assert.equal(detection.executor.port, 8090);
    assert.equal(detection.password?.reveal(), 'telnetpw1');
  });

  test('DayZ reads the BattlEye folder -BEpath names, and the process says which game it is', () => {
    scratch = new Scratch();
    scratch.write('be/beserver_x64.cfg', 'RConPassword bepw12345\nRConPort 2310\n');
    const server = proc(55, ['./DayZServer', '-BEpath=be'], scratch.path);
    const detection = onlyDetection(detectIn('/nonexistent-folder-for-this-test', { processes: [server] }));
    assert.equal(detection.game, 'dayz');
    assert.equal(detection.executor.port, 2310);
    assert.deepEqual(problemCodes(detection), ['rcon-restricted']);
  });

  test("Zomboid reads -cachedir's Server/<servername>.ini only", () => {
    scratch = new Scratch();
    scratch.write('data/Server/other.ini', 'RCONPort=27016\nRCONPassword=otherpw1\nPVP=true\n');
    scratch.write('data/Server/mine.ini', 'RCONPort=27017\nRCONPassword=minepw12\nPVP=true\n');
    const server = proc(66, ['./ProjectZomboid64', '-servername', 'mine', `-cachedir=${scratch.path}/data`], '/opt/pz');
    const detection = onlyDetection(detectIn('/nonexistent-folder-for-this-test', { processes: [server] }));
    assert.equal(detection.executor.port, 27017);
    assert.equal(detection.password?.reveal(), 'minepw12');
  });

  test('a running server whose settings cannot be found is noted, so its absence is explained', () => {
    scratch = new Scratch();
    const inEmptyFolder = proc(20, ['java', '-jar', 'server.jar'], scratch.path);
    const otherUsers = proc(21, ['./PalServer-Linux-Shipping'], undefined);
    const report = detectIn('/nonexistent-folder-for-this-test', { processes: [inEmptyFolder, otherUsers] });
    assert.deepEqual(report.detections, []);
    assert.deepEqual(report.notes.slice(1), [
      { path: 'java (pid 20)', message: `a minecraft server is running, but no settings file was found in ${scratch.path}` },
      {
        path: 'PalServer-Linux-Shipping (pid 21)',
        message:
          'a palworld server is running, but its folder cannot be seen from here (run porter init as the user it runs as, or pass --game-dir)',
      },
    ]);
  });

  test('best first: ready and running, then ready, then those with problems', () => {
    scratch = new Scratch();
    const off = scratch.copyOf('minecraft-rcon-off');
    const java = proc(10, ['java', '-jar', 'server.jar'], gameDir('minecraft'));
    const report = detectIn(off, { processes: [java] });
    assert.deepEqual(
      report.detections.map((detection) => [detection.game, detection.process?.pid, problemCodes(detection).length]),
      [
        ['minecraft', 10, 0],
        ['minecraft', undefined, 2],
      ],
    );
  });
});

/** A /proc made of a table: path → file content, link target, or error code. */
function fakeProc(entries: Record<string, { file?: string; link?: string; id?: string; error?: string; dir?: string[] }>): FileSeam {
  const entry = (path: string) => {
    const found = entries[path];
    if (!found) throw errno('ENOENT');
    if (found.error) throw errno(found.error);
    return found;
  };
  return {
    readFile: (path) => ({ bytes: Buffer.from(entry(path).file ?? ''), complete: true }),
    readDir: (path) => entry(path).dir ?? [],
    readLink: (path) => entry(path).link ?? '',
    fileId: (path) => entry(path).id ?? path,
  };
}

describe('readProcesses', () => {
  test('splits each command line at its NULs and skips what cannot be read', () => {
    const files = fakeProc({
      '/proc': { dir: ['1', '2', '3', '4', 'self', 'net'] },
      '/proc/1/cmdline': { file: '/srv/rust/RustDedicated\0+rcon.password\0a b\0\0' },
      '/proc/1/cwd': { link: '/srv/rust', id: 'dir-1' },
      '/srv/rust': { id: 'dir-1' },
      '/proc/1/exe': { link: '/srv/rust/RustDedicated' },
      '/proc/2/cmdline': { file: '' },
      '/proc/3/cmdline': { error: 'EACCES' },
      '/proc/4/cmdline': { file: 'java\0-jar\0server.jar\0' },
      '/proc/4/cwd': { link: '/data', id: 'dir-4' },
      '/data': { id: 'another-folder' },
    });
    assert.deepEqual(readProcesses(files), [
      { pid: 1, argv: ['/srv/rust/RustDedicated', '+rcon.password', 'a b', ''], cwd: '/srv/rust', exe: '/srv/rust/RustDedicated' },
      // A container's /data is not this machine's /data: the link itself leads to the right folder.
      { pid: 4, argv: ['java', '-jar', 'server.jar'], cwd: '/proc/4/cwd', exe: undefined },
    ]);
  });

  test('no /proc at all: no processes, no error', () => {
    assert.deepEqual(readProcesses(fakeProc({}), '/proc'), []);
  });

  test('splitCmdline: a final NUL ends the last argument', () => {
    assert.deepEqual(splitCmdline(Buffer.from('a\0b c\0')), ['a', 'b c']);
    assert.deepEqual(splitCmdline(Buffer.from('no-nul')), ['no-nul']);
    assert.deepEqual(splitCmdline(Buffer.alloc(0)), []);
  });

  test('the real /proc: this test process is there, with its own command line and folder', () => {
    const self = readProcesses().find((candidate) => candidate.pid === process.pid);
    assert.ok(self, 'this process was not found in /proc');
    assert.deepEqual(self.argv.slice(-process.argv.length + 1), process.argv.slice(1));
    assert.equal(self.cwd, process.cwd());
    assert.equal(self.exe, process.execPath);
  });
});
