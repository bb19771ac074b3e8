import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { battleyeTransport } from './battleye/descriptor.js';
import type { ResolveContext } from './descriptor.js';
import { rconTransport } from './rcon/descriptor.js';
import { scriptTransport } from './script/descriptor.js';
import { telnetTransport } from './telnet/descriptor.js';
import { tshockTransport } from './tshock/descriptor.js';
import { webrconTransport } from './webrcon/descriptor.js';

/**
 * Every transport porter speaks, in the order the config schema lists them. A new transport is
 * one descriptor here; the compiler then points at the registrations above this layer that are
 * keyed by its name (its executor in `registry.ts`).
 */
export const TRANSPORTS = [rconTransport, webrconTransport, scriptTransport, telnetTransport, tshockTransport, battleyeTransport] as const;

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

/** Each element's schema, keeping the tuple (the union needs one schema per position). */
type Schemas<T extends readonly Transport[]> = { -readonly [K in keyof T]: T[K]['schema'] };

/** The union of every transport's `executor` section, told apart by `type`. */
export const executorSchema = z.discriminatedUnion('type', TRANSPORTS.map((transport) => transport.schema) as Schemas<Transports>);

export function transportOf<T extends TransportType>(type: T): Extract<Transport, { readonly type: T }> {
  const found = TRANSPORTS.find((transport) => transport.type === type);
  // The schema admits no other type, so only a caller that bypassed it gets here.
  if (!found)
    throw new ConfigError(
      `executor.type "${type}" is not a transport porter knows; use one of ${TRANSPORTS.map((t) => t.type).join(', ')}`,
    );
  return found as Extract<Transport, { readonly type: T }>;
}

/** One section resolved by its own transport. */
export function resolveExecutor(parsed: ParsedExecutor, context: ResolveContext): ResolvedExecutor {
  // The descriptor is the one `parsed.type` names, so it takes this section; TypeScript cannot follow the pairing across the union.
  const resolve = transportOf(parsed.type).resolve as (parsed: ParsedExecutor, context: ResolveContext) => ResolvedExecutor;
  return resolve(parsed, context);
}
