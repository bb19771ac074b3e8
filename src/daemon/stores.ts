import type { Logger } from 'pino';
import { createApiClient, createApiOrigin, type ApiClient, type ApiOrigin } from '../api/wire/client.js';
import { InvalidTokenError, ScopeMissingError } from '../api/errors.js';
import { parseBaseUrl } from '../api/wire/routes.js';
import { DEFAULT_STORE_LABEL, type Config, type StoreApi } from '../config/schema.js';
import type { SecretBook } from '../secret-book.js';

/**
 * Many stores in one process (docs/design.md#many-stores). A store is `undefined` for the default
 * one (`api`) and its name for an entry of `stores`; `storeLabel` is how logs, /healthz and
 * metrics name it.
 */
export type StoreKey = string | undefined;

export function storeLabel(store: StoreKey): string {
  return store ?? DEFAULT_STORE_LABEL;
}

/** The API settings of a store: `api` for the default one. */
export function storeApi(config: Config, store: StoreKey): StoreApi {
  if (store === undefined) return config.api;
  const found = config.stores?.[store];
  // The schema refuses a server naming a store that is not configured.
  if (!found) throw new Error(`no store "${store}" in the configuration`);
  return found;
}

/** Where a store's token is set, for the message that asks for a new one. */
export function tokenKeys(store: StoreKey): string {
  return store === undefined
    ? 'api.token, api.tokenFile or PORTER_API_TOKEN'
    : `stores.${store}.token or stores.${store}.tokenFile (or the systemd credential porter-api-token-${store})`;
}

/** The Seller API refused the store's token: 401 after a re-read of its file found nothing newer, or 403 (a scope missing). */
export function isTokenRefused(error: unknown): error is InvalidTokenError | ScopeMissingError {
  return error instanceof InvalidTokenError || error instanceof ScopeMissingError;
}

/** The parts of a store's settings its HTTP client is built from; the token is swapped in place. */
export function clientSettings(api: StoreApi): unknown {
  return { baseUrl: api.baseUrl, timeoutMs: api.timeoutMs, routes: api.routes, tokenPath: api.tokenPath };
}

/**
 * One API client per store, and one connection pool per API origin shared by the clients of every
 * store there: a hosting company with a hundred stores on one platform keeps one set of
 * keep-alive connections to it, each request still carries its own store's token, and each
 * store has its fair share of the connections (src/api/wire/connection-share.ts).
 */
export class StoreClients {
  readonly #logger: Logger;
  readonly #current = new Map<StoreKey, ApiClient>();
  /** Every client not yet closed, with its store and origin. */
  readonly #clients = new Map<ApiClient, { readonly store: StoreKey; readonly origin: string }>();
  readonly #origins = new Map<string, ApiOrigin>();
  readonly #secrets: SecretBook;

  constructor(logger: Logger, secrets: SecretBook) {
    this.#logger = logger;
    this.#secrets = secrets;
  }

  /** The client a server of `store` starts with now. */
  clientFor(config: Config, store: StoreKey): ApiClient {
    const current = this.#current.get(store);
    if (current) return current;
    const api = storeApi(config, store);
    const { origin } = parseBaseUrl(api.baseUrl);
    let connections = this.#origins.get(origin);
    if (!connections) this.#origins.set(origin, (connections = createApiOrigin(origin, shortestDeadline(config, origin))));
    const client = createApiClient(api, { logger: this.#logger, origin: connections, store: storeLabel(store), secrets: this.#secrets });
    this.#current.set(store, client);
    this.#clients.set(client, { store, origin });
    return client;
  }

  /** A reloaded token: every client of the store sends it from the next call, running loops too. */
  useToken(store: StoreKey, token: string): void {
    for (const [client, of] of this.#clients) if (of.store === store) client.useToken(token);
  }

  /** The store's address, routes or deadline changed: its servers restart on a new client; the old one closes once unused. */
  retire(store: StoreKey): void {
    this.#current.delete(store);
  }

  /** Closes the clients no loop uses (and that no new loop would get), then the pools no client uses. */
  async closeUnused(used: ReadonlySet<ApiClient>): Promise<void> {
    const keep = new Set([...used, ...this.#current.values()]);
    for (const client of [...this.#clients.keys()]) {
      if (keep.has(client)) continue;
      this.#clients.delete(client);
      for (const [store, current] of this.#current) if (current === client) this.#current.delete(store);
      await client.close().catch(() => undefined);
    }
    const origins = new Set([...this.#clients.values()].map((of) => of.origin));
    for (const [origin, connections] of [...this.#origins]) {
      if (origins.has(origin)) continue;
      this.#origins.delete(origin);
      await connections.pool.close().catch(() => undefined);
    }
  }

  async closeAll(): Promise<void> {
    this.#current.clear();
    await this.closeUnused(new Set());
  }
}

/** The connect timeout of a shared pool comes from the shortest `timeoutMs` of the stores at its origin. */
function shortestDeadline(config: Config, origin: string): number {
  const apis = [config.api, ...Object.values(config.stores ?? {})].filter((api) => parseBaseUrl(api.baseUrl).origin === origin);
  return Math.min(...apis.map((api) => api.timeoutMs));
}
