import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { ConfigError } from '../errors.js';
import type { ResolvedExecutor, ResolvedExecutorOf, TransportType } from './transport-registry.js';
import type { Executor } from './executor.js';

/** What every executor is given besides its section. */
interface ExecutorDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  /** Where the configured game keeps its console password (Game.rconPassword), named when it is rejected. */
  readonly passwordHint?: string | undefined;
}

/** An executor class that runs the resolved section of transport `T`. */
type ExecutorClass<T extends TransportType> = new (config: ResolvedExecutorOf<T>, deps: ExecutorDeps) => Executor;

/**
 * Each transport's executor, imported the first time a server of its type is built: reading a
 * config (every command does, `porter history` too) loads the descriptors alone, and a daemon
 * loads the runtime of the transports its servers use, not all six. Keyed by the descriptors'
 * types, so the compiler refuses a descriptor without an executor here, an entry without a
 * descriptor, and an executor that does not take what its descriptor resolves. The bundle makes
 * each of these imports a chunk of its own (scripts/bundle.mjs).
 */
const EXECUTORS: { readonly [T in TransportType]: () => Promise<ExecutorClass<T>> } = {
  rcon: async () => (await import('./rcon/executor.js')).RconExecutor,
  webrcon: async () => (await import('./webrcon/executor.js')).WebRconExecutor,
  script: async () => (await import('./script/executor.js')).ScriptExecutor,
  telnet: async () => (await import('./telnet/executor.js')).TelnetExecutor,
  tshock: async () => (await import('./tshock/executor.js')).TShockExecutor,
  battleye: async () => (await import('./battleye/executor.js')).BattlEyeExecutor,
};

/** The executor that runs a resolved section: its own transport's, loaded if it was not yet. */
export async function createExecutor(config: ResolvedExecutor, deps: ExecutorDeps): Promise<Executor> {
  // The schema admits no other type, so only a caller that bypassed it meets this.
  if (!Object.hasOwn(EXECUTORS, config.type)) {
    throw new ConfigError(
      `executor.type "${config.type}" is not a transport porter knows; use one of ${Object.keys(EXECUTORS).join(', ')}`,
    );
  }
  // The class is the one `config.type` names, so it takes this section; TypeScript cannot follow the pairing across the union.
  const ExecutorClass = (await EXECUTORS[config.type]()) as new (config: ResolvedExecutor, deps: ExecutorDeps) => Executor;
  return new ExecutorClass(config, deps);
}
