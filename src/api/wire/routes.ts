import { ConfigError } from '../../errors.js';
import { baseUrlProblems } from '../../config/base-url.js';
import type { Config } from '../../config/schema.js';

/** Paths (below the base URL's own path) of the three executor routes for one call. */
export interface RoutePaths {
  pull(serverId: string): string;
  done(serverId: string, id: string): string;
  fail(serverId: string, id: string): string;
  /** `GET /v1/seller/servers`: used by `porter check`, claims nothing. */
  servers(): string;
}

interface BaseUrl {
  /** scheme://host:port, what the undici Pool connects to. */
  readonly origin: string;
  /** The base URL's path without a trailing slash ("" for the root), prefixed to every route. */
  readonly pathPrefix: string;
}

/**
 * Splits the base URL for the pool. The client asks the same rules as the config schema
 * (config/base-url.ts) because it is the part that actually sends the token: plain http only
 * to loopback (docs/design.md#the-api-contract).
 */
export function parseBaseUrl(baseUrl: string): BaseUrl {
  const [problem] = baseUrlProblems(baseUrl);
  if (problem !== undefined) throw new ConfigError(`api.baseUrl: ${problem}`);
  const url = new URL(baseUrl);
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
