import { serverLabel } from '../config/server-label.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { DeliveryObserver } from '../delivery/loop.js';
import type { RouteBudgetSnapshot } from '../api/budget.js';
import type { HealthServerPart, HealthSource } from './source.js';
import { evaluateHealth, type HealthPolicy } from './status.js';
import { WEBHOOK_OUTCOMES, type WebhookOutcome } from '../webhook/outcome.js';
import { porterVersion } from '../version.js';

/**
 * porter's Prometheus metrics, in a registry of its own (never prom-client's global one, so two
 * daemons in one process — tests, `porter demo` — never share counters).
 *
 * Two kinds of source: delivery events come through the DeliveryObserver the daemon is given
 * (counts and durations need every event); everything else is read from the running daemon at
 * scrape time (connection state, the API client's own counters, budget, journal backlog), so it
 * is exact whenever it is read and costs nothing between scrapes.
 */

export interface PorterMetrics {
  readonly registry: Registry;
  /** Pass to runDaemon({ observer }) so deliveries are counted and timed. */
  readonly observer: DeliveryObserver;
  /** Starts reading the daemon's state at scrape time (call from runDaemon's onStarted). */
  attach(source: HealthSource, policy: HealthPolicy): void;
  /** Counts one request to the webhook listener by what became of it. */
  webhookEvent(outcome: WebhookOutcome): void;
}

export interface MetricsOptions {
  /** Configured servers, so events name a server by its label even before attach(). */
  readonly servers?: readonly { readonly id: string; readonly name?: string | undefined }[];
  readonly clock: Clock;
  /** This porter's shard (`1/3`) when it runs one (--shard). */
  readonly shard?: string;
  /** Node process metrics (CPU, memory, event loop lag, GC); default on. */
  readonly processMetrics?: boolean;
  /** A webhook listener runs: every outcome is shown from 0, so a rate() over it works from the first event. */
  readonly webhook?: boolean;
}

/** Default Node metrics that are gauges with a counter's `_total` suffix. */
const MISNAMED_DEFAULT_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createMetrics(options: MetricsOptions): PorterMetrics {
  const registry = new Registry();
  const labels = new Map<string, string>((options.servers ?? []).map((s) => [s.id, serverLabel(s)]));
  let source: HealthSource | undefined;
  // A server added by a reload is in the daemon's list but was not when the labels were taken.
  const labelOf = (serverId: string) => {
    const known = labels.get(serverId);
    if (known !== undefined) return known;
    const added = source?.servers.find((part) => part.server.id === serverId)?.server;
    if (added) labels.set(serverId, serverLabel(added));
    return added ? serverLabel(added) : serverId;
  };
  let policy: HealthPolicy | undefined;
  const registers = [registry];

  const deliveries = new Counter({
    name: 'porter_deliveries_total',
    help: 'Commands settled (run and reported), by server and outcome (done / failed).',
    labelNames: ['server', 'outcome'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'porter_delivery_duration_seconds',
    help: 'Time from claim to accepted report, by server and outcome.',
    labelNames: ['server', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const lastSuccess = new Gauge({
    name: 'porter_last_successful_delivery_timestamp_seconds',
    help: 'Unix time of the last command delivered with outcome done.',
    labelNames: ['server'] as const,
    registers,
  });

  // One value per configured server (or per server and route), read from the parts at scrape time.
  const perServer = (part: HealthServerPart) => ({ server: serverLabel(part.server) });
  const serverGauge = (name: string, help: string, value: (part: HealthServerPart, from: HealthSource) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['server'] as const,
      registers,
      collect() {
        this.reset();
        if (source) for (const part of source.servers) this.set(perServer(part), value(part, source));
      },
    });
  const serverCounter = (name: string, help: string, value: (part: HealthServerPart) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['server'] as const,
      registers,
      collect() {
        this.reset();
        for (const part of source?.servers ?? []) this.inc(perServer(part), value(part));
      },
    });
  const routeGauge = (name: string, help: string, value: (snapshot: RouteBudgetSnapshot) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['server', 'route'] as const,
      registers,
      collect() {
        this.reset();
        for (const part of source?.servers ?? []) {
          for (const [route, snapshot] of Object.entries(part.api.stats().budget)) this.set({ ...perServer(part), route }, value(snapshot));
        }
      },
    });

  // The API client's counters only grow, so they are exposed as counters.
  const resultCounter = (name: string, help: string, counts: (part: HealthServerPart) => Record<string, number>) =>
    new Counter({
      name,
      help,
      labelNames: ['server', 'result'] as const,
      registers,
      collect() {
        this.reset();
        for (const part of source?.servers ?? []) {
          for (const [result, count] of Object.entries(counts(part))) this.inc({ ...perServer(part), result }, count);
        }
      },
    });

  resultCounter(
    'porter_pulls_total',
    'Pull calls by result: claimed, empty (nothing due), busy (204 while a lost claim may be PROCESSING), unusable (a claim porter cannot report), error.',
    (part) => {
      const { claimed, empty, busy204, unusable, error } = part.api.stats().pulls;
      return { claimed, empty, busy: busy204, unusable, error };
    },
  );
  resultCounter(
    'porter_reports_total',
    'done/fail calls by result: accepted, already_settled (404/409), refused (a 4xx for good: given up), error.',
    (part) => {
      const { accepted, alreadySettled, refused, error } = part.api.stats().reports;
      // Prometheus label values are snake_case; in the code the result is alreadySettled.
      return { accepted, already_settled: alreadySettled, refused, error };
    },
  );
  serverCounter('porter_rate_limited_total', 'Seller API answers 429 (rate limited), by server.', (part) => part.api.stats().rateLimited);
  routeGauge(
    'porter_budget_remaining',
    'Calls porter may still send in the current budget window, by server and route (pull / done / fail).',
    (snapshot) => snapshot.remaining,
  );
  routeGauge(
    'porter_budget_wait_seconds',
    'How long the next call to a route must wait for the budget or a Retry-After (0 = may go now).',
    (snapshot) => snapshot.delayMs / 1000,
  );
  serverGauge(
    'porter_claim_gap_open',
    '1 while a pull answer was lost and a claimed command may be stuck PROCESSING on the platform.',
    (part) => (part.api.stats().claimGapOpen ? 1 : 0),
  );
  serverGauge(
    'porter_executor_connected',
    '1 while the game server is reachable (RCON, WebRCON, telnet, BattlEye: logged in; TShock: its REST token accepted); scripts are always 1.',
    (part) => (part.executor.stats().connected ? 1 : 0),
  );
  serverCounter(
    'porter_executor_reconnects_total',
    'Reconnections to the game server since porter started.',
    (part) => part.executor.stats().reconnects,
  );
  serverGauge('porter_last_api_success_timestamp_seconds', 'Unix time of the last successful Seller API call (0 = none yet).', (part) => {
    const at = part.loop.health().lastApiSuccessAt;
    return at === undefined ? 0 : at / 1000;
  });
  serverGauge(
    'porter_journal_backlog',
    'Claimed commands not yet accepted by the API (journaled, owed a report), by server.',
    (part, from) => from.journal.pending(part.server.id).length,
  );
  new Counter({
    name: 'porter_journal_write_failures_total',
    help: 'Journal writes that failed (disk full, read-only, I/O error). While the journal cannot be written, porter claims nothing.',
    registers,
    collect() {
      this.reset();
      if (source) this.inc(source.journal.writeFailures);
    },
  });
  new Gauge({
    name: 'porter_journal_writable',
    help: '1 while the last journal write succeeded; 0 while writes fail and porter claims nothing new.',
    registers,
    collect() {
      if (source) this.set(source.journal.lastWriteError === undefined ? 1 : 0);
    },
  });
  new Gauge({
    name: 'porter_store_token_refused',
    help: '1 while the Seller API refused the store\'s token and its servers are stopped (until a reload), else 0; store="default" is the store of api.',
    labelNames: ['store'] as const,
    registers,
    collect() {
      this.reset();
      for (const store of source?.stores ?? []) this.set({ store: store.name }, store.refused ? 1 : 0);
    },
  });
  new Gauge({
    name: 'porter_shard_servers',
    help: 'Servers this porter runs: those of its shard (label shard, e.g. 1/3), or every configured server (shard="all").',
    labelNames: ['shard'] as const,
    registers,
    collect() {
      this.reset();
      if (source) this.set({ shard: options.shard ?? 'all' }, source.servers.length);
    },
  });
  new Gauge({
    name: 'porter_server_healthy',
    help: '1 when /healthz considers the server healthy, else 0.',
    labelNames: ['server'] as const,
    registers,
    collect() {
      this.reset();
      if (!source || !policy) return;
      const report = evaluateHealth(source, options.clock.now(), policy);
      for (const [server, health] of Object.entries(report.servers)) this.set({ server }, health.status === 'ok' ? 1 : 0);
    },
  });

  // The usual build-info gauge: a dashboard or alert joins on it to say which porter and Node.js run.
  new Gauge({
    name: 'porter_build_info',
    help: 'Always 1; its labels say which porter (version) runs on which Node.js (node).',
    labelNames: ['version', 'node'] as const,
    registers,
  }).set({ version: porterVersion(), node: process.version }, 1);

  const webhookEvents = new Counter({
    name: 'porter_webhook_events_total',
    help: `Requests to the webhook listener by outcome: ${WEBHOOK_OUTCOMES.join(', ')}. Only woken woke the servers.`,
    labelNames: ['outcome'] as const,
    registers,
  });
  if (options.webhook) for (const outcome of WEBHOOK_OUTCOMES) webhookEvents.inc({ outcome }, 0);

  if (options.processMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    // prom-client names three gauges like counters (promtool check metrics: "non-counter metrics
    // should not have _total suffix"); the same counts, by type, stay as nodejs_active_handles,
    // nodejs_active_requests and nodejs_active_resources.
    for (const misnamed of MISNAMED_DEFAULT_GAUGES) registry.removeSingleMetric(misnamed);
  }

  return {
    registry,
    observer: {
      onDelivery(event) {
        const server = labelOf(event.serverId);
        deliveries.inc({ server, outcome: event.result });
        duration.observe({ server, outcome: event.result }, event.ms / 1000);
        if (event.result === 'done') lastSuccess.set({ server }, options.clock.now() / 1000);
      },
    },
    webhookEvent(outcome) {
      webhookEvents.inc({ outcome });
    },
    attach(daemon, healthPolicy) {
      source = daemon;
      policy = healthPolicy;
      for (const part of daemon.servers) labels.set(part.server.id, serverLabel(part.server));
    },
  };
}
