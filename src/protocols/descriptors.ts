import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { battleyeTransport } from './battleye/descriptor.js';
import { BattlEyeExecutor } from './battleye/executor.js';
import { withExecutor, type ExecutorDeps, type ResolveContext } from './descriptor.js';
import type { Executor } from './executor.js';
import { rconTransport } from './rcon/descriptor.js';
import { RconExecutor } from './rcon/executor.js';
import { scriptTransport } from './script/descriptor.js';
import { ScriptExecutor } from './script/executor.js';
import { telnetTransport } from './telnet/descriptor.js';
import { TelnetExecutor } from './telnet/executor.js';
import { tshockTransport } from './tshock/descriptor.js';
import { TShockExecutor } from './tshock/executor.js';
import { webrconTransport } from './webrcon/descriptor.js';
import { WebRconExecutor } from './webrcon/executor.js';

/**
 * Every transport porter speaks, in the order the config schema lists them, each with the
 * executor that runs it. A new transport is one entry here: everything keyed by a transport's
 * name (the config union, init's consoles, `porter rcon`, the executor a server gets) derives from it.
 */
export const TRANSPORTS = [
  withExecutor(rconTransport, RconExecutor),
  withExecutor(webrconTransport, WebRconExecutor),
  withExecutor(scriptTransport, ScriptExecutor),
  withExecutor(telnetTransport, TelnetExecutor),
  withExecutor(tshockTransport, TShockExecutor),
  withExecutor(battleyeTransport, BattlEyeExecutor),
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

/** The executor that runs a resolved section: its own transport's. */
export function createExecutor(config: ResolvedExecutor, deps: ExecutorDeps): Executor {
  // The transport is the one `config.type` names, so its executor takes this section; TypeScript cannot follow the pairing across the union.
  const create = transportOf(config.type).createExecutor as (config: ResolvedExecutor, deps: ExecutorDeps) => Executor;
  return create(config, deps);
}
