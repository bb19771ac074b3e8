// npm run test:unit: every compiled test file outside the integration, lifecycle and ship tiers
// (docs/contributing.md#which-loop-when), in a few Node processes that each run their share of the files
// one after another, instead of one process per file as `node --test` does (and `npm test` still
// does). On Node 20 a process per file costs ~0.3 s of CPU to start and load porter's modules
// again: for ~120 files that was more than half of the tier's CPU time, which on 2 cores decided
// whether it took 25 s or 60 s. (Node 22's --experimental-test-isolation=none does this itself.)
// Each process gets a balanced share by the time each file took in the previous run.
//
// Files that share a process share its globals: a test that passes in `npm test` and fails here
// (or the other way round) leaves something behind for the next file, which is worth fixing.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { testFiles } from './test-files.mjs';

/** The other tiers: test:integration (programs, terminals) and test:ship (what is shipped). */
const ELSEWHERE = ['dist/test/integration', 'dist/test/lifecycle', 'dist/test/ship'];
/** More processes than cores: many unit tests wait on sockets and timers rather than compute. */
const PROCESSES = 2 * availableParallelism();
/** Far beyond a normal run (~30 s): only a test that hangs reaches it. */
const BOUND_MS = 10 * 60_000;
const TIMES = 'node_modules/.cache/porter/unit-times.json';

if (process.argv[2] === '--files') await runHere(process.argv.slice(3));
else await main();

/** In one process of the tier: imports each file in turn; node:test runs their tests in order. */
async function runHere(files) {
  for (const file of files) {
    try {
      await import(pathToFileURL(file).href);
    } catch (error) {
      console.error(`test:unit: ${file} could not be loaded:`, error);
      process.exitCode = 1;
    }
  }
}

async function main() {
  const started = Date.now();
  const files = testFiles('dist/test').filter((file) => !ELSEWHERE.some((dir) => file.startsWith(`${dir}/`)));
  const known = readTimes();
  const shares = balance(files, known, Math.min(PROCESSES, files.length));
  const scratch = mkdtempSync(join(tmpdir(), 'porter-unit-'));
  try {
    const results = await Promise.all(shares.map((share, index) => runShare(share, join(scratch, `${index}.json`))));
    report(results, files.length, started);
    writeTimes(known, results);
    process.exitCode = results.every((result) => result.ok) ? 0 : 1;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Longest first, each to the least loaded share; a file not timed yet counts as an average one. */
function balance(files, known, count) {
  const timed = files.map((file) => known[file]).filter((ms) => ms !== undefined);
  const average = timed.length ? timed.reduce((sum, ms) => sum + ms, 0) / timed.length : 1;
  const weight = (file) => known[file] ?? average;
  const shares = Array.from({ length: count }, () => ({ files: [], ms: 0 }));
  for (const file of [...files].sort((a, b) => weight(b) - weight(a))) {
    const lightest = shares.reduce((min, share) => (share.ms < min.ms ? share : min));
    lightest.files.push(file);
    lightest.ms += weight(file);
  }
  return shares.map((share) => share.files);
}

function runShare(files, timesFile) {
  const args = [
    ...['--test-reporter=dot', '--test-reporter-destination=stdout'],
    ...['--test-reporter=./scripts/unit-times.mjs', `--test-reporter-destination=${timesFile}`],
    // Absolute, as Node reports it in process.argv[1]: a test compares that with /proc/self/cmdline.
    fileURLToPath(import.meta.url),
    '--files',
    ...files,
  ];
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
    const watchdog = setTimeout(() => {
      output += `\ntest:unit: not finished after ${BOUND_MS / 60_000} min: a test in these files hangs:\n  ${files.join('\n  ')}\n`;
      child.kill('SIGKILL');
    }, BOUND_MS);
    child.on('close', (code) => {
      clearTimeout(watchdog);
      const counts = existsSync(timesFile) ? JSON.parse(readFileSync(timesFile, 'utf8')) : { tests: 0, failed: 0, msByFile: {} };
      done({ files, output, ok: code === 0 && counts.failed === 0, ...counts });
    });
  });
}

function report(results, fileCount, started) {
  for (const result of results.filter((r) => !r.ok)) process.stdout.write(`${result.output}\n`);
  const tests = results.reduce((sum, r) => sum + r.tests, 0);
  const failed = results.reduce((sum, r) => sum + r.failed, 0);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const verdict = results.every((r) => r.ok) ? 'all passed' : `${failed} failed (output above)`;
  console.log(`test:unit: ${tests} tests in ${fileCount} files, ${verdict}, in ${seconds} s (${results.length} processes)`);
}

function readTimes() {
  try {
    return JSON.parse(readFileSync(TIMES, 'utf8'));
  } catch {
    return {};
  }
}

/** Keeps each file's time under its path relative to the repository, as balance() looks it up. */
function writeTimes(known, results) {
  const times = Object.fromEntries(Object.entries(known).filter(([file]) => existsSync(file)));
  for (const { msByFile } of results) {
    for (const [file, ms] of Object.entries(msByFile)) times[relative(resolve('.'), file)] = Math.round(ms);
  }
  mkdirSync('node_modules/.cache/porter', { recursive: true });
  writeFileSync(TIMES, `${JSON.stringify(times, null, 1)}\n`);
}
