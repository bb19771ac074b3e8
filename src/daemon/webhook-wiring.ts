import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { webhookKey } from '../config/webhook-secret.js';
import type { WebhookOutcome } from '../webhook/outcome.js';
import type { WebhookServer } from '../webhook/server.js';

/**
 * Connects the webhook listener to a daemon (docs/design.md#webhook-wake-ups): the default
 * store's verified payment events wake every server's loop. The listener's address and settings
 * are fixed for the process's life (a reload logs that they wait for a restart); the secret is
 * taken from each reloaded configuration and the TLS files are read again on every SIGHUP.
 * Undefined when the config has no `webhook` section: no port is opened then.
 */
export interface WebhookWiring {
  /** Opens the listener; rejects when the address cannot be bound or a TLS file read. */
  start(): Promise<void>;
  /** The reloaded configuration's secret. */
  useConfig(next: Config): void;
  reloadTls(): Promise<void>;
  close(): Promise<void>;
}

export interface WebhookWiringDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  /** The loops running now: a wake-up reaches the servers a reload added too. */
  readonly loops: () => readonly { wake(): void }[];
  readonly onOutcome?: (outcome: WebhookOutcome) => void;
}

export function webhookWiring(config: Config, deps: WebhookWiringDeps): WebhookWiring | undefined {
  const settings = config.webhook;
  if (settings === undefined) return undefined;
  let keys = keysOf(config);
  let server: WebhookServer | undefined;
  let closed = false;
  return {
    async start() {
      if (closed) return;
      const { startWebhookServer } = await import('../webhook/server.js');
      server = await startWebhookServer({
        ...settings,
        // Named stores come with `stores`; until then only the default store has a secret.
        secretsFor: (store) => (store === undefined ? keys : undefined),
        wake: (store) => {
          if (store === undefined) for (const loop of deps.loops()) loop.wake();
        },
        ...(deps.onOutcome && { onOutcome: deps.onOutcome }),
        logger: deps.logger,
        clock: deps.clock,
      });
    },
    useConfig(next) {
      keys = keysOf(next);
    },
    reloadTls: async () => server?.reloadTls(),
    async close() {
      closed = true;
      await server?.close();
    },
  };
}

function keysOf(config: Config): readonly Uint8Array[] | undefined {
  return config.api.webhookSecret === undefined ? undefined : [webhookKey(config.api.webhookSecret)];
}
