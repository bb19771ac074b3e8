import { serverLabel } from '../config/server-label.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { DeliveryObserver } from '../delivery/loop.js';
import type { RouteBudgetSnapshot } from '../api/budget/budget.js';
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

interface MetricsOptions {
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

/** What the scrape-time metrics read: the running daemon and the health policy, once attached. */
interface Scrape {
  source?: HealthSource;
  policy?: HealthPolicy;
}

type Sample = readonly [labels: Record<string, string>, value: number];

interface ScrapedSpec {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly string[];
  /** The values now; called only once a daemon is attached. */
  readonly samples: (source: HealthSource, policy: HealthPolicy | undefined) => Iterable<Sample>;
  /** Forget the values of the last scrape first (a server gone after a reload); default true. */
  readonly reset?: boolean;
}

/**
 * A metric read from the daemon at scrape time: a gauge, or a counter for a count that only grows
 * (the API client's). One definition for every such metric, whatever its labels.
 */
function scraped(kind: 'gauge' | 'counter', scrape: Scrape, registers: Registry[], spec: ScrapedSpec): void {
  const { name, help, labelNames = [], samples, reset = true } = spec;
  function collect(this: Gauge | Counter): void {
    if (reset) this.reset();
    if (!scrape.source) return;
    for (const [labels, value] of samples(scrape.source, scrape.policy)) {
      if (this instanceof Gauge) this.set(labels, value);
      else this.inc(labels, value);
    }
  }
  if (kind === 'gauge') new Gauge({ name, help, labelNames, registers, collect });
  else new Counter({ name, help, labelNames, registers, collect });
}

const perServer = (part: HealthServerPart) => ({ server: serverLabel(part.server) });

/** One value per server, read from its parts. */
function eachServer(value: (part: HealthServerPart, from: HealthSource) => number): ScrapedSpec['samples'] {
  return (source) => source.servers.map((part) => [perServer(part), value(part, source)] as const);
}

/** One value per server and key of a record its parts give (a route's budget, a result's count). */
function eachServerAnd(label: string, values: (part: HealthServerPart) => Record<string, number>): ScrapedSpec['samples'] {
  return (source) =>
    source.servers.flatMap((part) =>
      Object.entries(values(part)).map(([key, value]) => [{ ...perServer(part), [label]: key }, value] as const),
    );
}

/** The labels of the configured servers (a stopped one keeps its series); the running ones when the source does not list stores. */
function configuredLabels(source: HealthSource): Set<string> {
  return new Set(source.stores ? source.stores.flatMap((store) => store.servers) : source.servers.map((part) => serverLabel(part.server)));
}

/**
 * Counted as they happen, from the DeliveryObserver: every event matters. A server a reload
 * removed loses its series at the next scrape, so a host that replaces servers all day does not
 * keep one set per server ever run; one added back starts from 0, which rate() reads as a reset.
 */
function deliveryMetrics(scrape: Scrape, registers: Registry[], clock: Clock, labelOf: (serverId: string) => string): DeliveryObserver {
  const counted = new Set<string>();
  const outcomes = ['done', 'failed'] as const;
  const forgetRemoved = () => {
    if (!scrape.source) return;
    const configured = configuredLabels(scrape.source);
    for (const server of counted) {
      if (configured.has(server)) continue;
      for (const outcome of outcomes) {
        deliveries.remove({ server, outcome });
        duration.remove({ server, outcome });
      }
      lastSuccess.remove({ server });
      counted.delete(server);
    }
  };
  const deliveries = new Counter({
    name: 'porter_deliveries_total',
    help: 'Commands settled (run and reported), by server and outcome (done / failed).',
    labelNames: ['server', 'outcome'] as const,
    registers,
    collect: forgetRemoved,
  });
  const duration = new Histogram({
    name: 'porter_delivery_duration_seconds',
    help: 'Time from claim to accepted report, by server and outcome.',
    labelNames: ['server', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers,
    collect: forgetRemoved,
  });
  const lastSuccess = new Gauge({
    name: 'porter_last_successful_delivery_timestamp_seconds',
    help: 'Unix time of the last command delivered with outcome done.',
    labelNames: ['server'] as const,
    registers,
    collect: forgetRemoved,
  });
  return {
    onDelivery(event) {
      const server = labelOf(event.serverId);
      counted.add(server);
      deliveries.inc({ server, outcome: event.result });
      duration.observe({ server, outcome: event.result }, event.ms / 1000);
      if (event.result === 'done') lastSuccess.set({ server }, clock.now() / 1000);
    },
  };
}

/** What each server's API client counted, and where its budget stands. */
function apiMetrics(scrape: Scrape, registers: Registry[]): void {
  scraped('counter', scrape, registers, {
    name: 'porter_pulls_total',
    help: 'Pull calls by result: claimed, empty (nothing due), busy (204 while a lost claim may be PROCESSING), unusable (a claim porter cannot report), error.',
    labelNames: ['server', 'result'],
    samples: eachServerAnd('result', (part) => {
      const { claimed, empty, busy204, unusable, error } = part.api.stats().pulls;
      return { claimed, empty, busy: busy204, unusable, error };
    }),
  });
  scraped('counter', scrape, registers, {
    name: 'porter_reports_total',
    help: 'done/fail calls by result: accepted, already_settled (404/409), refused (a 4xx for good: given up), error.',
    labelNames: ['server', 'result'],
    samples: eachServerAnd('result', (part) => {
      const { accepted, alreadySettled, refused, error } = part.api.stats().reports;
      // Prometheus label values are snake_case; in the code the result is alreadySettled.
      return { accepted, already_settled: alreadySettled, refused, error };
    }),
  });
  scraped('counter', scrape, registers, {
    name: 'porter_rate_limited_total',
    help: 'Seller API answers 429 (rate limited), by server.',
    labelNames: ['server'],
    samples: eachServer((part) => part.api.stats().rateLimited),
  });
  const budget = (value: (snapshot: RouteBudgetSnapshot) => number) =>
    eachServerAnd('route', (part) =>
      Object.fromEntries(Object.entries(part.api.stats().budget).map(([route, snapshot]) => [route, value(snapshot)])),
    );
  scraped('gauge', scrape, registers, {
    name: 'porter_budget_remaining',
    help: 'Calls porter may still send in the current budget window, by server and route (pull / done / fail).',
    labelNames: ['server', 'route'],
    samples: budget((snapshot) => snapshot.remaining),
  });
  scraped('gauge', scrape, registers, {
    name: 'porter_budget_wait_seconds',
    help: 'How long the next call to a route must wait for the budget or a Retry-After (0 = may go now).',
    labelNames: ['server', 'route'],
    samples: budget((snapshot) => snapshot.delayMs / 1000),
  });
  scraped('gauge', scrape, registers, {
    name: 'porter_claim_gap_open',
    help: '1 while a pull answer was lost and a claimed command may be stuck PROCESSING on the platform.',
    labelNames: ['server'],
    samples: eachServer((part) => (part.api.stats().claimGapOpen ? 1 : 0)),
  });
}

/** Each server's game connection, its last good API call and what its journal still owes. */
function serverMetrics(scrape: Scrape, registers: Registry[]): void {
  scraped('gauge', scrape, registers, {
    name: 'porter_executor_connected',
    help: "1 while porter is logged in to the game server's console (TShock: while its REST token is accepted); always 1 for a script.",
    labelNames: ['server'],
    samples: eachServer((part) => (part.executor.stats().connected ? 1 : 0)),
  });
  scraped('counter', scrape, registers, {
    name: 'porter_executor_reconnects_total',
    help: 'Reconnections to the game server since porter started.',
    labelNames: ['server'],
    samples: eachServer((part) => part.executor.stats().reconnects),
  });
  scraped('gauge', scrape, registers, {
    name: 'porter_last_api_success_timestamp_seconds',
    help: 'Unix time of the last successful Seller API call (0 = none yet).',
    labelNames: ['server'],
    samples: eachServer((part) => {
      const at = part.loop.health().lastApiSuccessAt;
      return at === undefined ? 0 : at / 1000;
    }),
  });
  scraped('gauge', scrape, registers, {
    name: 'porter_journal_backlog',
    help: 'Claimed commands not yet accepted by the API (journaled, owed a report), by server.',
    labelNames: ['server'],
    samples: eachServer((part, from) => from.journal.pending(part.server.id).length),
  });
}

/** The whole daemon: its journal, its stores, its shard, and what /healthz says of each server. */
function daemonMetrics(scrape: Scrape, registers: Registry[], options: MetricsOptions): void {
  scraped('counter', scrape, registers, {
    name: 'porter_journal_write_failures_total',
    help: 'Journal writes that failed (disk full, read-only, I/O error). While the journal cannot be written, porter claims nothing.',
    samples: (source) => [[{}, source.journal.writeFailures]],
  });
  scraped('gauge', scrape, registers, {
    name: 'porter_journal_writable',
    help: '1 while the last journal write succeeded; 0 while writes fail and porter claims nothing new.',
    samples: (source) => [[{}, source.journal.lastWriteError === undefined ? 1 : 0]],
    reset: false,
  });
  scraped('gauge', scrape, registers, {
    name: 'porter_store_token_refused',
    help: '1 while the Seller API refused the store\'s token and its servers are stopped (until a reload), else 0; store="default" is the store of api.',
    labelNames: ['store'],
    samples: (source) => (source.stores ?? []).map((store) => [{ store: store.name }, store.refused ? 1 : 0] as const),
  });
  scraped('gauge', scrape, registers, {
    name: 'porter_shard_servers',
    help: 'Servers this porter runs: those of its shard (label shard, e.g. 1/3), or every configured server (shard="all").',
    labelNames: ['shard'],
    samples: (source) => [[{ shard: options.shard ?? 'all' }, source.servers.length]],
  });
  scraped('gauge', scrape, registers, {
    name: 'porter_server_healthy',
    help: '1 when /healthz considers the server healthy, else 0.',
    labelNames: ['server'],
    samples: (source, policy) => {
      if (!policy) return [];
      const report = evaluateHealth(source, options.clock.now(), policy);
      return Object.entries(report.servers).map(([server, health]) => [{ server }, health.status === 'ok' ? 1 : 0] as const);
    },
  });
  // The usual build-info gauge: a dashboard or alert joins on it to say which porter and Node.js run.
  new Gauge({
    name: 'porter_build_info',
    help: 'Always 1; its labels say which porter (version) runs on which Node.js (node).',
    labelNames: ['version', 'node'] as const,
    registers,
  }).set({ version: porterVersion(), node: process.version }, 1);
}

/** The process's own figures: CPU, memory, event loop lag, GC. */
function processMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  // prom-client names three gauges like counters (promtool check metrics: "non-counter metrics
  // should not have _total suffix"); the same counts, by type, stay as nodejs_active_handles,
  // nodejs_active_requests and nodejs_active_resources.
  for (const misnamed of MISNAMED_DEFAULT_GAUGES) registry.removeSingleMetric(misnamed);
}

export function createMetrics(options: MetricsOptions): PorterMetrics {
  const registry = new Registry();
  const registers = [registry];
  // The servers configured at start, for events before attach(); after it, the daemon's list names
  // them, a reload's additions included, and nothing is kept per server id a reload removed.
  const labels = new Map<string, string>((options.servers ?? []).map((s) => [s.id, serverLabel(s)]));
  const scrape: Scrape = {};
  const labelOf = (serverId: string) => {
    const running = scrape.source?.servers.find((part) => part.server.id === serverId)?.server;
    return running ? serverLabel(running) : (labels.get(serverId) ?? serverId);
  };

  const observer = deliveryMetrics(scrape, registers, options.clock, labelOf);
  apiMetrics(scrape, registers);
  serverMetrics(scrape, registers);
  daemonMetrics(scrape, registers, options);
  const webhookEvents = new Counter({
    name: 'porter_webhook_events_total',
    help: `Requests to the webhook listener by outcome: ${WEBHOOK_OUTCOMES.join(', ')}. Only woken woke the servers.`,
    labelNames: ['outcome'] as const,
    registers,
  });
  if (options.webhook) for (const outcome of WEBHOOK_OUTCOMES) webhookEvents.inc({ outcome }, 0);
  if (options.processMetrics ?? true) processMetrics(registry);

  return {
    registry,
    observer,
    webhookEvent(outcome) {
      webhookEvents.inc({ outcome });
    },
    attach(daemon, healthPolicy) {
      scrape.source = daemon;
      scrape.policy = healthPolicy;
    },
  };
}
