import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ResolvedExecutor } from '../config/schema.js';
import { BattlEyeExecutor } from './battleye/executor.js';
import type { Executor } from './executor.js';
import { RconExecutor } from './rcon/executor.js';
import { ScriptExecutor } from './script/executor.js';
import { TelnetExecutor } from './telnet/executor.js';
import { TShockExecutor } from './tshock/executor.js';
import { WebRconExecutor } from './webrcon/executor.js';

/** `passwordHint`: where the configured game keeps its RCON password (Game.rconPassword), named when it is rejected. */
export function createExecutor(
  config: ResolvedExecutor,
  deps: { logger: Logger; clock: Clock; passwordHint?: string | undefined },
): Executor {
  switch (config.type) {
    case 'rcon':
      return new RconExecutor(config, deps);
    case 'webrcon':
      return new WebRconExecutor(config, deps);
    case 'battleye':
      return new BattlEyeExecutor(config, deps);
    case 'script':
      return new ScriptExecutor(config, deps);
    case 'telnet':
      return new TelnetExecutor(config, deps);
    case 'tshock':
      return new TShockExecutor(config, deps);
  }
}
