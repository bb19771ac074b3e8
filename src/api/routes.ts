import { ConfigError } from '../errors.js';
import type { Config } from '../config/schema.js';

/** Paths (below the base URL's own path) of the three executor routes for one call. */
export interface RoutePaths {
  pull(serverId: string): string;
  done(serverId: string, id: string): string;
  fail(serverId: string, id: string): string;
  /** `GET /v1/seller/servers`: used by `porter check`, claims nothing. */
  servers(): string;
}

export interface BaseUrl {
  /** scheme://host:port, what the undici Pool connects to. */
  readonly origin: string;
  /** The base URL's path without a trailing slash ("" for the root), prefixed to every route. */
  readonly pathPrefix: string;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Splits the base URL for the pool. Plain http is refused except to loopback: the token travels
 * in every request (DESIGN §1, Transport). The config loader checks this too; the client checks
 * again because it is the part that actually sends the token.
 */
export function parseBaseUrl(baseUrl: string): BaseUrl {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(`api.baseUrl: "${baseUrl}" is not a URL; expected e.g. https://seller.example.com`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`api.baseUrl: expected an https:// URL, got ${url.protocol}//`);
  }
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) {
    throw new ConfigError(
      `api.baseUrl: plain http:// to ${url.hostname} would send the API token unencrypted; use https:// (http is allowed only to loopback addresses)`,
    );
  }
  if (url.search || url.hash) {
    throw new ConfigError('api.baseUrl: must not contain a query string or fragment; give scheme, host and optional path only');
  }
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}

function expand(template: string, values: Record<'serverId' | 'id', string | undefined>): string {
  return template.replace(/\{(serverId|id)\}/g, (_match, name: 'serverId' | 'id') => {
    const value = values[name];
    if (value === undefined) {
      throw new ConfigError(`api.routes: the template "${template}" uses {${name}}, which this route does not have`);
    }
    return encodeURIComponent(value);
  });
}

/** Route templates of `api.routes` with `{serverId}` and `{id}` URL-encoded into them. */
export function createRoutePaths(routes: Config['api']['routes'], base: BaseUrl): RoutePaths {
  return {
    pull: (serverId) => base.pathPrefix + expand(routes.pull, { serverId, id: undefined }),
    done: (serverId, id) => base.pathPrefix + expand(routes.done, { serverId, id }),
    fail: (serverId, id) => base.pathPrefix + expand(routes.fail, { serverId, id }),
    servers: () => `${base.pathPrefix}/v1/seller/servers`,
  };
}
