import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../helpers/wait-for.js';
import { startBed, WAIT, type PorterProcess } from './harness.js';

/**
 * Servers that come and go all day: 1,000 servers in one porter, each reload
 * replacing 500 of them with new ids, against the Seller API simulator. porter keeps a removed
 * server's call budget only while the API can still count its calls (docs/design.md#the-call-budget),
 * so its heap levels off; it used to keep one budget per server id ever seen (~0.8 MB a reload
 * here). The heap is read in the porter process after a full collection, through
 * test/helpers/heap-probe.ts loaded with NODE_OPTIONS; porter itself is the shipped CLI.
 */

const SERVERS = 1_000;
const REPLACED = 500;
const RELOADS = 30;
/** The reload after which the heap is taken as the baseline: start-up's one-off allocations are done by then. */
const BASELINE_AT = 10;
/** A rolling window short enough that a removed server's calls leave it within a reload or two. */
const WINDOW_MS = 2_000;
/** What 20 reloads may add: the budgets of the servers removed in the last window, and noise. Keeping every removed id's budget adds twice this and more. */
const GROWTH_BOUND_BYTES = 8 * 1024 * 1024;

const serverId = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

async function heapUsed(porter: PorterProcess, probeFile: string): Promise<number> {
  await waitFor(() => existsSync(probeFile) && readFileSync(probeFile, 'utf8') !== '', { ...WAIT, what: 'the heap probe in porter' });
  const port = readFileSync(probeFile, 'utf8');
  const answer = (await (await fetch(`http://127.0.0.1:${port}/`)).json()) as { heapUsed: number };
  return answer.heapUsed;
}

test(`${SERVERS.toLocaleString('en-US')} servers, ${RELOADS} reloads each replacing ${REPLACED} with new ids: porter's heap levels off`, async (t) => {
  const ids = Array.from({ length: SERVERS + REPLACED * RELOADS }, (_, i) => serverId(i + 1));
  const bed = await startBed({ api: { servers: ids } });
  try {
    const configure = (reload: number) =>
      bed.writeConfig((config) => {
        const servers = ids.slice(reload * REPLACED, reload * REPLACED + SERVERS).map((id, i) => ({
          id,
          name: `churn ${reload * REPLACED + i + 1}`,
          executor: { type: 'script', exec: ['/bin/true'], timeoutMs: 10_000 },
        }));
        Object.assign(config, { servers, poll: { idleMs: 60_000 } });
        Object.assign(config.api, { budget: { perWindow: 120, windowMs: WINDOW_MS, share: 1 } });
      });
    configure(0);
    const probeFile = join(bed.dir, 'heap-probe-port');
    const probe = pathToFileURL(new URL('../helpers/heap-probe.js', import.meta.url).pathname).href;
    const porter = bed.spawnPorter({ env: { NODE_OPTIONS: `--import ${probe}`, HEAP_PROBE_FILE: probeFile } });
    await porter.waitForEvent('porter.started');

    const heaps: number[] = [];
    for (let reload = 1; reload <= RELOADS; reload++) {
      configure(reload);
      porter.kill('SIGHUP');
      await waitFor(() => porter.events('reload.done').length >= reload, { timeoutMs: 60_000, intervalMs: 50, what: `reload ${reload}` });
      if (reload === BASELINE_AT || reload === RELOADS) heaps.push(await heapUsed(porter, probeFile));
    }
    const [baseline, last] = heaps as [number, number];
    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
    t.diagnostic(`heap after a full collection: ${mb(baseline)} MB after reload ${BASELINE_AT}, ${mb(last)} MB after reload ${RELOADS}`);
    assert.ok(
      last - baseline < GROWTH_BOUND_BYTES,
      `the heap grew by ${mb(last - baseline)} MB over ${RELOADS - BASELINE_AT} reloads (${mb(baseline)} → ${mb(last)} MB): something is kept per server id removed`,
    );
    porter.kill('SIGTERM');
    assert.deepEqual(await porter.waitExit(), { code: 0, signal: null }, porter.tail());
  } finally {
    await bed.close();
  }
});
