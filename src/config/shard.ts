import { createHash } from 'node:crypto';
import { UsageError } from '../errors.js';
import type { Config } from './schema.js';
import { serverLabel } from './server-label.js';

/**
 * Several porters, one configuration (docs/operations.md#shards-several-porters-one-configuration): each runs the servers whose
 * hash falls in its shard. The hash is fixed by the fleet contract — sha256 of the server id, its
 * first 8 bytes read big-endian, modulo N — so every porter, whatever its version or host, puts a
 * server in the same shard.
 */
export interface Shard {
  /** 0-based, below `count`. */
  readonly index: number;
  readonly count: number;
}

/** The most shards porter takes: far more pods than any one store's servers need. */
const MAX_SHARDS = 10_000;

/** Where the shard came from, to name it in errors: the flag or the environment variable. */
type ShardSource = '--shard' | 'PORTER_SHARD';

/**
 * `I/N` or `auto/N`; `auto` takes the trailing `-<number>` of the host name, as a Kubernetes
 * StatefulSet names its pods (porter-0, porter-1, …).
 */
export function parseShard(text: string, source: ShardSource, hostname: string): Shard {
  const usage = `${source} takes I/N (this porter's shard I, from 0, of N) or auto/N (I from the host name's trailing -<number>, as a StatefulSet names its pods)`;
  const match = /^\s*(auto|\d{1,6})\s*\/\s*(\d{1,6})\s*$/.exec(text);
  if (!match) throw new UsageError(`${source} "${text}" is not a shard: ${usage}`);
  const count = Number(match[2]);
  if (count < 1 || count > MAX_SHARDS) throw new UsageError(`${source} "${text}": N must be 1 to ${MAX_SHARDS}; ${usage}`);
  let index: number;
  if (match[1] === 'auto') {
    const ordinal = /-(\d{1,6})$/.exec(hostname);
    if (!ordinal) {
      throw new UsageError(
        `${source} "${text}": the host name "${hostname}" does not end in -<number> as a StatefulSet pod's does; give the shard itself (${source === '--shard' ? '--shard ' : 'PORTER_SHARD='}0/${count})`,
      );
    }
    index = Number(ordinal[1]);
  } else {
    index = Number(match[1]);
  }
  if (index >= count) {
    throw new UsageError(
      `${source} "${text}": shard ${index} does not exist among ${count} (they are 0 to ${count - 1}); a StatefulSet's replicas and N must be the same number`,
    );
  }
  return { index, count };
}

/** The shard a server belongs to among `count`. */
export function shardOfServer(serverId: string, count: number): number {
  const digest = createHash('sha256').update(serverId, 'utf8').digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(count));
}

function inShard(serverId: string, shard: Shard): boolean {
  return shardOfServer(serverId, shard.count) === shard.index;
}

function describeShard(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** The configuration this porter runs: only its shard's servers, the count of all kept for its log line. */
export function applyShard(config: Config, shard: Shard | undefined): Config {
  if (shard === undefined) return config;
  return {
    ...config,
    servers: config.servers.filter((server) => inShard(server.id, shard)),
    shard: { ...shard, serversConfigured: config.servers.length },
  };
}

/** What a sharded porter logs at start and after each reload: which servers it runs. */
export function shardSummary(config: Config): string | undefined {
  if (config.shard === undefined) return undefined;
  const { serversConfigured } = config.shard;
  const running = config.servers.length;
  const names = config.servers.map((server) => serverLabel(server)).join(', ');
  return `shard ${describeShard(config.shard)}: running ${running} of ${serversConfigured} configured server${serversConfigured === 1 ? '' : 's'}${running > 0 ? `: ${names}` : ' (the others belong to other shards; this porter waits for a reload)'}`;
}
