import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { nodeFiles, READ_LIMIT, type FileSeam } from '../../src/init/detect/files.js';
import { detectIn, gameDir, onlyDetection, Scratch } from './helpers.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated`), { code });
}

/** The real file system, except that the paths named fail with the code given. */
function failing(paths: Record<string, string>): FileSeam {
  const check = (path: string) => {
    const code = Object.entries(paths).find(([suffix]) => path.endsWith(suffix))?.[1];
    if (code) throw errno(code);
  };
  return {
    readFile: (path, limit) => (check(path), nodeFiles.readFile(path, limit)),
    readDir: (path) => (check(path), nodeFiles.readDir(path)),
    readLink: (path) => (check(path), nodeFiles.readLink(path)),
    fileId: (path) => (check(path), nodeFiles.fileId(path)),
  };
}

describe('detection on a hostile file system', () => {
  let scratch: Scratch;
  afterEach(() => scratch?.remove());

  test('an unreadable settings file is skipped with a note saying why, and the rest is still found', () => {
    scratch = new Scratch();
    scratch.copyOf('minecraft');
    scratch.write('tshock/config.json', '{"RestApiEnabled": true, "ApplicationRestTokens": {"tok12345": {}}}');
    const report = detectIn(scratch.path, { fs: failing({ 'server.properties': 'EACCES' }) });
    assert.deepEqual(
      report.detections.map((detection) => detection.game),
      ['terraria'],
    );
    assert.deepEqual(report.notes, [
      {
        path: './server.properties',
        message: 'skipped: permission denied (run porter init as a user who can read it, or point --game-dir elsewhere)',
      },
    ]);
  });

  test('an unlistable folder is a note too; any other error is named by its code', () => {
    scratch = new Scratch();
    scratch.write('server/main/cfg/server.cfg', 'rcon.password "x1234567"\n');
    scratch.write('serverconfig.xml', '<ServerSettings/>');
    const report = detectIn(scratch.path, { fs: failing({ '/server': 'EACCES', 'serverconfig.xml': 'EIO' }) });
    assert.deepEqual(report.detections, []);
    assert.deepEqual(
      report.notes.map((note) => [note.path, note.message.split(':')[0]]),
      [
        ['./server', 'skipped'],
        ['./serverconfig.xml', 'skipped'],
      ],
    );
    assert.match(report.notes[1]!.message, /\(EIO\)/);
  });

  test('symbolic link loops, for a file and for a folder, are skipped with a note', () => {
    scratch = new Scratch();
    symlinkSync('server.properties', join(scratch.path, 'server.properties'));
    mkdirSync(join(scratch.path, 'server'));
    symlinkSync('.', join(scratch.path, 'server', 'loop'));
    symlinkSync('tshock', join(scratch.path, 'tshock'));
    const report = detectIn(scratch.path);
    assert.deepEqual(report.detections, []);
    assert.deepEqual(report.notes.map((note) => [note.path, note.message]).sort(), [
      ['./server.properties', 'skipped: a loop of symbolic links'],
      ['./tshock/config.json', 'skipped: a loop of symbolic links'],
    ]);
  });

  test('a file over 1 MiB is not read whole and not taken for settings', () => {
    scratch = new Scratch();
    scratch.write('server.properties', `enable-rcon=true\nrcon.password=pw123456\n${'#'.repeat(READ_LIMIT)}\n`);
    const report = detectIn(scratch.path);
    assert.deepEqual(report.detections, []);
    assert.deepEqual(report.notes, [{ path: './server.properties', message: 'skipped: larger than 1 MiB, so not a settings file' }]);
  });

  test('a FIFO or a folder where a settings file should be: skipped at once, without waiting for a writer', (t) => {
    scratch = new Scratch();
    try {
      execFileSync('mkfifo', [join(scratch.path, 'server.properties')]);
    } catch {
      t.skip('mkfifo is not available here');
      return;
    }
    mkdirSync(join(scratch.path, 'tshock', 'config.json'), { recursive: true });
    const report = detectIn(scratch.path);
    assert.deepEqual(report.detections, []);
    assert.deepEqual(report.notes.map((note) => [note.path, note.message]).sort(), [
      ['./server.properties', 'skipped: not a regular file'],
      ['./tshock/config.json', 'skipped: not a regular file'],
    ]);
  });

  test('a folder that does not exist, or is a file, is said so', () => {
    assert.deepEqual(detectIn('/nonexistent/porter-test-folder').notes, [
      { path: '/nonexistent/porter-test-folder', message: 'no such folder: check --game-dir' },
    ]);
    const file = join(gameDir('minecraft'), 'server.properties');
    assert.deepEqual(detectIn(file).notes, [{ path: file, message: 'not a folder: check --game-dir' }]);
  });

  test('every operation failing with EIO: no detection, no exception', () => {
    const broken: FileSeam = {
      readFile: () => {
        throw errno('EIO');
      },
      readDir: () => {
        throw errno('EIO');
      },
      readLink: () => {
        throw errno('EIO');
      },
      fileId: () => {
        throw errno('EIO');
      },
    };
    const report = detectIn(gameDir('minecraft'), { fs: broken, processes: undefined });
    assert.deepEqual(report.detections, []);
    assert.ok(report.notes.length > 0);
  });

  test('a file the home folder holds is shown as ~/…', () => {
    scratch = new Scratch();
    scratch.write('Zomboid/Server/servertest.ini', 'RCONPort=27015\nRCONPassword=pw123456\nPVP=true\n');
    const detection = onlyDetection(detectIn('/nonexistent/porter-test-folder', { places: { home: scratch.path } }));
    assert.equal(detection.found[0]?.source, '~/Zomboid/Server/servertest.ini');
  });
});
