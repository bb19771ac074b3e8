import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../lib/free-port.js';
import { figure } from '../lib/figure.js';
import { type Fixture, releaseFixture, startFixture } from '../lib/fixture.js';
import { ExecutedLog } from '../lib/executed.js';
import { startPorter, type PorterProcess } from '../lib/porter-process.js';
import { RequestTally } from '../lib/requests.js';
import { exponential, percentile, round } from '../lib/stats.js';
import { sleep, until } from '../lib/wait.js';
import { porterOptions, type Benchmark, type BenchContext } from '../lib/context.js';

/**
 * Purchases pushed by the store's webhook against purchases found by polling
 * (docs/design.md#webhook-wake-ups), side by side:
 *
 * - push: `poll.idleMs` 15 s and `webhook.listen`; each payment is queued in the Seller API
 *   simulator and announced at once by a signed `order.payment_approved` (signed with the
 *   `standardwebhooks` package, as the store's sender would);
 * - polling only: the defaults (`poll.idleMs` 1 s, no webhook), the same payments, no event.
 *
 * Latency = when the game server ran the command − when the payment was queued. Idle pulls per
 * minute = the pulls the API saw while nothing was bought, over a quiet stretch of each run:
 * what the server's budget (shared with the official connector) pays for waiting.
 */

const PUSH_IDLE_MS = 15_000;
const MEAN_GAP_MS = 2_000;

interface PushRun {
  readonly samples: number[];
  readonly idlePullsPerMinute: number;
}

async function announce(url: string, signer: Webhook, eventId: string): Promise<void> {
  const body = JSON.stringify({ type: 'order.payment_approved', eventId, data: { order: { id: eventId } } });
  const id = `msg_${eventId}`;
  const at = new Date();
  const response = await fetch(url, {
    method: 'POST',
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signer.sign(id, at, body),
    },
  });
  if (response.status < 200 || response.status > 299) throw new Error(`benchmark: the webhook answered ${response.status}`);
}

async function run(context: BenchContext, pushed: boolean, count: number, quietMs: number): Promise<PushRun> {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const port = await freePort();
  const fixture: Fixture = await startFixture(pushed ? { idleMs: PUSH_IDLE_MS, webhook: { listen: `127.0.0.1:${port}`, secret } } : {});
  let porter: PorterProcess | undefined;
  try {
    const tally = new RequestTally(fixture.api);
    porter = startPorter(fixture.configPath, fixture.dir, porterOptions(context));
    const p = porter;
    await until(() => tally.update().pulls >= 1, 'the first pull', { timeoutMs: 20_000, onTimeout: () => p.tail() });
    // The quiet stretch: nothing bought, only the idle polling the budget pays for.
    const before = tally.update().pulls;
    const quietFrom = Date.now();
    await sleep(quietMs);
    const idlePullsPerMinute = round(((tally.update().pulls - before) * 60_000) / (Date.now() - quietFrom));

    const executed = new ExecutedLog(fixture.game);
    const signer = new Webhook(secret);
    const paid: Array<{ command: string; at: number }> = [];
    for (let i = 0; i < count; i++) {
      await sleep(exponential(MEAN_GAP_MS));
      const command = `say push ${i}`;
      const at = Date.now();
      fixture.api.enqueue(fixture.serverId, { command, offlineExecute: true, executeAt: at });
      paid.push({ command, at });
      if (pushed) await announce(`http://127.0.0.1:${port}/webhook`, signer, `evt_${i}_${randomBytes(4).toString('hex')}`);
    }
    await until(() => paid.every((d) => executed.ranAt(d.command) !== undefined), `all ${count} commands to run`, {
      timeoutMs: 120_000,
      onTimeout: () => p.tail(),
    });
    return { samples: paid.map((d) => executed.ranAt(d.command)! - d.at), idlePullsPerMinute };
  } finally {
    await porter?.stop();
    await releaseFixture(fixture, context);
  }
}

export const push: Benchmark = {
  name: 'push',
  runsPorter: true,
  description: `payment → executed with a webhook wake-up (poll.idleMs ${PUSH_IDLE_MS / 1000} s) beside polling only (defaults), and idle pulls a minute`,
  sideBySide: true,
  async run(context) {
    const count = context.quick ? 15 : 40;
    const quietMs = context.quick ? 30_000 : 60_000;
    const [pushed, polled] = await Promise.all([run(context, true, count, quietMs), run(context, false, count, quietMs)]);
    context.progress(
      `  push p50 ${percentile(pushed.samples, 50)} ms p99 ${percentile(pushed.samples, 99)} ms, ${pushed.idlePullsPerMinute} idle pulls/min; polling p50 ${percentile(polled.samples, 50)} ms, ${polled.idlePullsPerMinute}/min`,
    );
    return {
      name: this.name,
      figures: [
        figure('push.p50', 'webhook: payment → executed p50', 'ms', [percentile(pushed.samples, 50)], {
          target: { op: '<=', value: 150, text: '≤ 150 ms' },
        }),
        figure('push.p99', 'webhook: payment → executed p99', 'ms', [percentile(pushed.samples, 99)], {
          target: { op: '<=', value: 1000, text: '≤ 1 s' },
        }),
        figure('push.idlePulls', 'webhook: idle pulls per minute (poll.idleMs 15 s)', 'count', [pushed.idlePullsPerMinute], {
          target: { op: '<=', value: 10, text: '≤ 10' },
        }),
        figure('push.pollP50', 'polling only: payment → executed p50', 'ms', [percentile(polled.samples, 50)]),
        figure('push.pollP99', 'polling only: payment → executed p99', 'ms', [percentile(polled.samples, 99)]),
        figure('push.pollIdlePulls', 'polling only: idle pulls per minute (defaults)', 'count', [polled.idlePullsPerMinute]),
      ],
      detail: { pushedMs: pushed.samples, polledMs: polled.samples },
    };
  },
};
