import { PorterError } from '../errors.js';
import { startPurchaseRoute, type QueuedPurchase } from './purchase-route.js';
import { isAlive, readSimState, removeSimState, writeSimState } from './sim-state.js';
import type { SimStore } from './sim-store.js';

/**
 * A running sim's checkout: the purchases route, and the state file that lets `porter sim buy`
 * in another terminal find it. A second sim on the same state file is refused while the first
 * runs, so a purchase never lands in a store nobody is looking at.
 */

class SimAlreadyRunningError extends PorterError {
  override readonly code = 'E_SIM_RUNNING';
}

export interface Checkout {
  readonly url: string;
  close(): Promise<void>;
}

export async function openCheckout(
  store: SimStore,
  game: string,
  statePath: string,
  onPurchase: (purchase: QueuedPurchase) => void = () => {},
): Promise<Checkout> {
  const running = readSimState(statePath);
  if (running && running.pid !== process.pid && isAlive(running.pid)) {
    throw new SimAlreadyRunningError(
      `a sim already runs (pid ${running.pid}, store ${running.storeUrl}; its state is ${statePath}): stop it with Ctrl-C, or give this one another file with --state FILE`,
    );
  }
  const route = await startPurchaseRoute(store, onPurchase);
  writeSimState(statePath, { pid: process.pid, game, storeUrl: store.api.url, purchasesUrl: route.url, token: store.token });
  return {
    url: route.url,
    close: async () => {
      removeSimState(statePath);
      await route.close();
    },
  };
}
