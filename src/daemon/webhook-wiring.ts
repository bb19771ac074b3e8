import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { webhookKey, webhookSecretOf } from '../config/webhook-secret.js';
import type { WebhookOutcome } from '../webhook/outcome.js';
import type { WebhookServer } from '../webhook/server.js';

/**
 * Connects the webhook listener to a daemon (docs/design.md#webhook-wake-ups): a store's verified
 * payment events (`POST /webhook` for the store of `api`, `POST /webhook/<name>` for a named one)
 * wake the loops of that store's servers. The listener's address and settings
 * are fixed for the process's life (a reload logs that they wait for a restart); the secret is
 * taken from each reloaded configuration and the TLS files are read again on every SIGHUP.
 * Undefined when the config has no `webhook` section: no port is opened then.
 */
export interface WebhookWiring {
  /** Opens the listener; rejects when the address cannot be bound or a TLS file read. */
  start(): Promise<void>;
  /** A reload's configuration, once it is planned and before its servers log in: its stores' secrets are used from now on. */
  useConfig(next: Config): void;
  reloadTls(): Promise<void>;
  /** The port the listener took (`webhook.listen` may say 0); undefined before start. */
  port(): number | undefined;
  close(): Promise<void>;
}

interface WebhookWiringDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  /** Wakes the loops of a store's servers running now (undefined: the store of `api`), so a wake-up reaches the servers a reload added too. */
  readonly wake: (store: string | undefined) => void;
  readonly onOutcome?: (outcome: WebhookOutcome) => void;
}

export function webhookWiring(config: Config, deps: WebhookWiringDeps): WebhookWiring | undefined {
  const settings = config.webhook;
  if (settings === undefined) return undefined;
  let current = config;
  let server: WebhookServer | undefined;
  let closed = false;
  return {
    async start() {
      if (closed) return;
      const { startWebhookServer } = await import('../webhook/server.js');
      server = await startWebhookServer({
        ...settings,
        // A store without a webhook secret, or no such store, answers 404: nothing there can be verified.
        secretsFor: (store) => keysOf(current, store),
        wake: deps.wake,
        ...(deps.onOutcome && { onOutcome: deps.onOutcome }),
        logger: deps.logger,
        clock: deps.clock,
      });
    },
    useConfig(next) {
      current = next;
    },
    reloadTls: async () => server?.reloadTls(),
    port: () => server?.port,
    async close() {
      closed = true;
      await server?.close();
    },
  };
}

/** The keys a store's events are signed with: `api.webhookSecret` for the default store, `stores.<name>.webhookSecret` for a named one. */
function keysOf(config: Config, store: string | undefined): readonly Uint8Array[] | undefined {
  const secret = webhookSecretOf(config, store);
  return secret === undefined ? undefined : [webhookKey(secret)];
}
