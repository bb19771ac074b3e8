import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { BattlEyeExecutor } from './battleye/executor.js';
import type { ResolvedExecutor, TransportType } from './descriptors.js';
import type { Executor } from './executor.js';
import { RconExecutor } from './rcon/executor.js';
import { ScriptExecutor } from './script/executor.js';
import { TelnetExecutor } from './telnet/executor.js';
import { TShockExecutor } from './tshock/executor.js';
import { WebRconExecutor } from './webrcon/executor.js';

interface ExecutorDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  readonly passwordHint?: string | undefined;
}

/**
 * Each transport's executor, by the name its descriptor gives it (descriptors.ts). The executors
 * sit above the config layer, so the descriptors cannot name them; the mapped type makes a
 * descriptor without its executor a compile error here.
 */
const EXECUTORS: { readonly [T in TransportType]: (config: Extract<ResolvedExecutor, { type: T }>, deps: ExecutorDeps) => Executor } = {
  rcon: (config, deps) => new RconExecutor(config, deps),
  webrcon: (config, deps) => new WebRconExecutor(config, deps),
  script: (config, deps) => new ScriptExecutor(config, deps),
  telnet: (config, deps) => new TelnetExecutor(config, deps),
  tshock: (config, deps) => new TShockExecutor(config, deps),
  battleye: (config, deps) => new BattlEyeExecutor(config, deps),
};

/** `passwordHint`: where the configured game keeps its RCON password (Game.rconPassword), named when it is rejected. */
export function createExecutor(config: ResolvedExecutor, deps: ExecutorDeps): Executor {
  // EXECUTORS[config.type] takes the config of that very type; TypeScript cannot follow the pairing across the union.
  const create = EXECUTORS[config.type] as (config: ResolvedExecutor, deps: ExecutorDeps) => Executor;
  return create(config, deps);
}
