import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { waitFor } from '../helpers/wait-for.js';
import { acceptedReports, isSettled, SIM_SERVER_ID, startBed, WAIT, type TestBed } from './harness.js';
import { freePort } from '../../bench/lib/free-port.js';

/**
 * A state directory on a small tmpfs that fills up and frees again while porter delivers, through
 * the real CLI. The promise: a full disk stops claims (at most the claim in hand fails, "not run"),
 * /healthz and /metrics say why, no pull goes out meanwhile, and deliveries resume by themselves
 * once space is freed; nothing runs twice, nothing is lost.
 *
 * Mounting needs root (CI runs as root). Where it is impossible the test fails in CI and is skipped
 * elsewhere with the reason.
 */

const mountPoint = mkdtempSync(join(tmpdir(), 'porter-tmpfs-'));
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0700', 'tmpfs', mountPoint], { encoding: 'utf8' });
const mountError =
  mounted.status === 0 ? undefined : `cannot mount a tmpfs here (${(mounted.stderr || mounted.error?.message || '').trim()})`;
if (mountError && process.env.CI === 'true') throw new Error(`${mountError}: CI runs as root and must be able to`);

describe('a state directory whose disk fills up and frees again (real CLI, tmpfs)', { skip: mountError }, () => {
  let bed: TestBed;
  let healthPort: number;
  const filler = join(mountPoint, 'filler');

  before(async () => {
    bed = await startBed({ rcon: { players: ['Steve'] } });
    healthPort = await freePort();
    bed.writeConfig((config) => {
      config.stateDir = join(mountPoint, 'state');
      Object.assign(config, { health: { listen: `127.0.0.1:${healthPort}` } });
    });
  });

  after(async () => {
    await bed?.close();
    spawnSync('umount', [mountPoint]);
    rmdirSync(mountPoint);
  });

  test('claims stop while the journal cannot be written, /healthz says why, and deliveries resume by themselves', async () => {
    const first = Array.from({ length: 3 }, (_, i) => bed.api.enqueue(SIM_SERVER_ID, { command: `say before-${i}`, offlineExecute: true }));
    const porter = bed.spawnPorter();
    await waitFor(() => first.every((id) => isSettled(status(id))), { ...WAIT, what: 'the first deliveries' });

    fillDisk(filler);
    // Appends may still fit in a page the log already holds; purchases keep coming until a write fails.
    let queued = 0;
    await waitFor(
      () => {
        if (porter.events('journal.unwritable').length > 0) return true;
        if (bed.api.commands().every((c) => isSettled(c.status)) && queued < 200) {
          bed.api.enqueue(SIM_SERVER_ID, { command: `say during-${queued++}`, offlineExecute: true });
        }
        return porter.exit ? assert.fail(`porter exited\n${porter.tail()}`) : false;
      },
      { ...WAIT, what: 'a journal write to fail on the full disk' },
    );
    const waiting = Array.from({ length: 3 }, (_, i) =>
      bed.api.enqueue(SIM_SERVER_ID, { command: `say waiting-${i}`, offlineExecute: true }),
    );

    const health = await get(healthPort, '/healthz');
    assert.equal(health.status, 503, health.text);
    assert.match(health.text, /journal not writable/);
    const failuresAtFirst = metric(await get(healthPort, '/metrics'), 'porter_journal_write_failures_total');
    assert.equal(metric(await get(healthPort, '/metrics'), 'porter_journal_writable'), 0);
    const pullsWhileFull = pulls();
    // porter retries the journal with backoff; two more failed retries prove time passed with the disk full.
    await waitFor(async () => metric(await get(healthPort, '/metrics'), 'porter_journal_write_failures_total') >= failuresAtFirst + 2, {
      ...WAIT,
      what: 'porter to retry the journal twice',
    });
    assert.equal(pulls(), pullsWhileFull, 'porter pulled while its journal could not be written');
    for (const id of waiting) assert.equal(status(id), 'SCHEDULED');

    rmSync(filler);
    await waitFor(() => bed.api.commands().every((c) => isSettled(c.status)), {
      ...WAIT,
      what: 'deliveries to resume once space was freed',
    });
    assert.equal((await get(healthPort, '/healthz')).status, 200);

    const notRun = new Set(
      bed.api
        .commands()
        .filter((c) => /^not run: porter could not record the claim/.test(c.error ?? ''))
        .map((c) => c.id),
    );
    assert.ok(notRun.size <= 1, `a full disk failed ${notRun.size} purchases; at most the claim in hand may fail`);
    for (const command of bed.api.commands()) {
      const text = String(command.command);
      assert.equal(command.claims, 1, `${text} claimed ${command.claims} times`);
      assert.equal(acceptedReports(command), 1, `${text}: ${JSON.stringify(command.reports)}`);
      const expectedRuns = notRun.has(command.id) ? 0 : 1;
      assert.equal(bed.ranCount(text), expectedRuns, `${text} ran ${bed.ranCount(text)} times`);
    }

    porter.kill('SIGTERM');
    assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
  });

  function status(id: string): string {
    return bed.api.commands().find((c) => c.id === id)?.status ?? 'missing';
  }

  function pulls(): number {
    return bed.api.requests.filter((r) => r.route === 'pull').length;
  }
});

/** Writes until the file system refuses, first in large blocks then in small ones. */
function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (const size of [64 * 1024, 4096, 512, 1]) {
      const block = Buffer.alloc(size, 0x78);
      try {
        for (;;) writeSync(fd, block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

async function get(port: number, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) });
  return { status: response.status, text: await response.text() };
}

function metric(answer: { text: string }, name: string): number {
  const line = answer.text.split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `no ${name} in /metrics`);
  return Number(line.split(' ')[1]);
}
