import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { ClaimGate } from './gate.js';
import { watchGameServer } from './watch.js';

export interface AgonesWiring {
  readonly gate: ClaimGate;
  close(): Promise<void>;
}

/**
 * porter as a sidecar of an Agones GameServer (docs/design.md#agones): every loop waits at the
 * gate until the GameServer is Ready, Reserved or Allocated; Shutdown drains porter as SIGTERM does.
 */
export function startAgones(options: {
  readonly port: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly onShutdown: () => void;
}): AgonesWiring {
  const logger = options.logger.child({ component: 'agones' });
  const gate = new ClaimGate();
  const stop = new AbortController();
  let shutdown = false;
  logger.info(
    { event: 'agones.following', port: options.port },
    'Agones: following the GameServer state; claiming nothing until it is Ready, Reserved or Allocated',
  );
  const watching = watchGameServer({
    port: options.port,
    clock: options.clock,
    logger,
    signal: stop.signal,
    onState: (state) => {
      const previous = gate.state;
      const { after } = gate.update(state);
      if (state !== previous) {
        const what =
          after === 'claim'
            ? 'claiming'
            : after === 'shutdown'
              ? 'draining: no new claims, the command in hand is finished'
              : 'holding claims';
        logger.info({ event: 'agones.state', state: state ?? null }, `Agones GameServer is ${state ?? 'in an unknown state'}: ${what}`);
      }
      if (after === 'shutdown' && !shutdown) {
        shutdown = true;
        options.onShutdown();
      }
    },
  });
  return {
    gate,
    close: async () => {
      stop.abort();
      await watching;
    },
  };
}
