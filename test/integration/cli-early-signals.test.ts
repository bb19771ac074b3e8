import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

/**
 * `porter run` holds the signals that come while it loads (src/cli/early-signals.ts): a SIGTERM
 * or SIGINT is not the end of the process but a stop handed to the daemon, a SIGHUP a reload;
 * a second stop while loading exits 0 at once. Other commands keep node's defaults. Each case is
 * a node process that imports the module as porter's first import does, signals itself, and says
 * what it holds.
 */

const MODULE = fileURLToPath(new URL('../../src/cli/early-signals.js', import.meta.url));

function probe(
  command: string,
  signals: readonly NodeJS.Signals[],
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const script = `
    const held = await import(${JSON.stringify(MODULE)});
    for (const signal of ${JSON.stringify(signals)}) process.kill(process.pid, signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.stdout.write(JSON.stringify(held.takeEarlySignals()));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, '--', 'porter.js', command], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, out }));
  });
}

describe('signals while porter run loads', () => {
  test('a SIGTERM, a SIGINT or a SIGHUP is held for the daemon', async () => {
    assert.deepEqual(await probe('run', ['SIGTERM']), { code: 0, signal: null, out: '{"hangup":false,"stop":true}' });
    assert.deepEqual(await probe('run', ['SIGINT']), { code: 0, signal: null, out: '{"hangup":false,"stop":true}' });
    assert.deepEqual(await probe('run', ['SIGHUP']), { code: 0, signal: null, out: '{"hangup":true,"stop":false}' });
  });

  test('a second stop while loading exits 0 at once: nothing can have been claimed yet', async () => {
    assert.deepEqual(await probe('run', ['SIGTERM', 'SIGTERM']), { code: 0, signal: null, out: '' });
  });

  test('other commands keep the defaults: SIGTERM ends porter check', async () => {
    const ended = await probe('check', ['SIGTERM']);
    assert.equal(ended.signal, 'SIGTERM');
  });
});
