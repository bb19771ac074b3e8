import type { SecretBook } from '../secret-book.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { DeliveryObserver } from '../delivery/loop.js';
import { createMetrics } from './metrics.js';
import { startHealthServer, type HealthServer } from './server.js';
import type { HealthSource } from './source.js';
import type { WebhookOutcome } from '../webhook/outcome.js';

/**
 * Connects the health/metrics endpoint to a daemon in one place (runDaemon uses it, so
 * `porter run` and `porter demo` get it the same way): the observer goes to every delivery
 * loop, onStarted starts the endpoint once the servers are assembled, close() stops it.
 * Returns undefined when the config has no `health` section: no port is opened then.
 */
export interface HealthWiring {
  readonly daemonOptions: {
    readonly observer: DeliveryObserver;
    readonly onStarted: (daemon: HealthSource) => Promise<void>;
  };
  /** The endpoint once started (undefined before onStarted ran). */
  server(): HealthServer | undefined;
  /** Counts a webhook request in /metrics. */
  readonly webhookEvent: (outcome: WebhookOutcome) => void;
  close(): Promise<void>;
}

export function healthWiring(
  config: Pick<Config, 'health' | 'servers' | 'poll' | 'shard' | 'webhook'>,
  deps: { readonly logger: Logger; readonly clock: Clock; readonly secrets?: SecretBook },
): HealthWiring | undefined {
  const listen = config.health?.listen;
  if (listen === undefined) return undefined;
  const metrics = createMetrics({
    clock: deps.clock,
    servers: config.servers,
    webhook: config.webhook !== undefined,
    ...(config.shard ? { shard: `${config.shard.index}/${config.shard.count}` } : {}),
  });
  let server: HealthServer | undefined;
  let closed = false;
  return {
    daemonOptions: {
      observer: metrics.observer,
      onStarted: async (daemon) => {
        if (closed) return;
        server = await startHealthServer({
          listen,
          daemon,
          logger: deps.logger,
          clock: deps.clock,
          metrics,
          pollIdleMs: config.poll.idleMs,
          ...(deps.secrets ? { secrets: deps.secrets } : {}),
        });
      },
    },
    server: () => server,
    webhookEvent: (outcome) => metrics.webhookEvent(outcome),
    close: async () => {
      closed = true;
      await server?.close();
    },
  };
}
