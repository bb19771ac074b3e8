import type { Config, ResolvedServer } from '../config/schema.js';
import { apiConnectionCap, outOfFilesAdvice, type OpenFileLimit } from '../net/open-files.js';
import { transportOf } from '../protocols/transport-registry.js';

/**
 * How many descriptors a configuration needs, counted from what porter really opens: what each
 * server's transport holds (its descriptor's `openFiles`: one connection to the game server, or
 * the pipes of a delivery script while it runs), the Seller API client's connections (shared
 * by every server, at most apiConnectionCap), and what node, the log, the journal, its lock and the
 * history hold whatever the number of servers (about 24, measured with one server).
 */
const PROCESS_FILES = 24;

function filesPerServer(server: ResolvedServer): number {
  return transportOf(server.executor.type).openFiles;
}

interface OpenFilesNeed {
  readonly total: number;
  readonly servers: number;
  readonly api: number;
}

export function openFilesNeed(config: Config, limit: OpenFileLimit | undefined): OpenFilesNeed {
  const servers = config.servers.reduce((sum, server) => sum + filesPerServer(server), 0);
  const api = Math.min(config.servers.length, apiConnectionCap(limit));
  return { total: PROCESS_FILES + servers + api, servers, api };
}

/** A warning when the configuration needs more descriptors than the soft limit allows; undefined when it fits. */
export function openFilesWarning(config: Config, limit: OpenFileLimit | undefined): string | undefined {
  if (!limit) return undefined;
  const need = openFilesNeed(config, limit);
  if (need.total <= limit.soft) return undefined;
  const n = config.servers.length;
  return (
    `open files: ${n} server${n === 1 ? '' : 's'} need about ${need.total} open files ` +
    `(${need.servers} for the game-server connections, up to ${need.api} for the Seller API, ~${PROCESS_FILES} for node, the journal and the history) ` +
    `but the open-file limit is ${limit.soft}: servers that find none left get no connection (EMFILE) and retry with backoff; ${outOfFilesAdvice(limit)}`
  );
}
