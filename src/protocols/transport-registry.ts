import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { battleyeTransport } from './battleye/descriptor.js';
import type { ResolveContext, ResolvedOf } from './transport-descriptor.js';
import { rconTransport } from './rcon/descriptor.js';
import { scriptTransport } from './script/descriptor.js';
import { telnetTransport } from './telnet/descriptor.js';
import { tshockTransport } from './tshock/descriptor.js';
import { webrconTransport } from './webrcon/descriptor.js';

/**
 * Every transport porter speaks, in the order the config schema lists them: what reading a config
 * needs of each (schema, defaults, secret, console, open files, resolve), and nothing of its
 * runtime. A new transport is one entry here and one in `EXECUTORS` (executor-registry.ts):
 * everything keyed by a transport's name (the config union, init's consoles, `porter rcon`)
 * derives from this list, and the compiler makes the executors' list follow it.
 */
export const TRANSPORTS = [
  rconTransport, // Source RCON over TCP
  webrconTransport, // Rust's WebRCON
  scriptTransport, // a local program, once per command
  telnetTransport, // 7 Days to Die's telnet console
  tshockTransport, // Terraria's TShock REST API
  battleyeTransport, // BattlEye RCon over UDP
] as const;

type Transports = typeof TRANSPORTS;
type Transport = Transports[number];
/** The config's `executor.type`: one name per transport. */
export type TransportType = Transport['type'];
/** The transports with a remote console (everything but a script): what `porter init` finds and proves. */
export type ConsoleTransportType = Extract<Transport, { readonly console: object }>['type'];
/** A server's `executor` section as parsed, defaults filled in, secrets not resolved yet. */
type ParsedExecutor = z.output<Transport['schema']>;
/** What an executor is built from: paths absolute, the secret resolved. */
export type ResolvedExecutor = ReturnType<Transport['resolve']>;
/** What the executor of transport `T` is built from. */
export type ResolvedExecutorOf<T extends TransportType> = ResolvedOf<TransportOf<T>>;
type TransportOf<T extends TransportType> = Extract<Transport, { readonly type: T }>;

/** Each element's schema, keeping the tuple (the union needs one schema per position). */
type Schemas<T extends readonly Transport[]> = { -readonly [K in keyof T]: T[K]['schema'] };

/** The union of every transport's `executor` section, told apart by `type`. */
export const executorSchema = z.discriminatedUnion('type', TRANSPORTS.map((transport) => transport.schema) as Schemas<Transports>);

export function transportOf<T extends TransportType>(type: T): TransportOf<T> {
  const found = TRANSPORTS.find((transport) => transport.type === type);
  // The schema admits no other type, so only a caller that bypassed it gets here.
  if (!found)
    throw new ConfigError(
      `executor.type "${type}" is not a transport porter knows; use one of ${TRANSPORTS.map((t) => t.type).join(', ')}`,
    );
  return found as TransportOf<T>;
}

/** One section resolved by its own transport. */
export function resolveExecutor(parsed: ParsedExecutor, context: ResolveContext): ResolvedExecutor {
  // The descriptor is the one `parsed.type` names, so it takes this section; TypeScript cannot follow the pairing across the union.
  const resolve = transportOf(parsed.type).resolve as (parsed: ParsedExecutor, context: ResolveContext) => ResolvedExecutor;
  return resolve(parsed, context);
}
