import { messageOf, PorterError, UsageError } from '../errors.js';
import type { QueuedPurchase } from './purchase-route.js';
import { purchaseFrom, type PurchaseRequest } from './sim-purchase.js';
import { isAlive, readSimState } from './sim-state.js';

/** `porter sim buy`: a purchase in the running sim's store, found through its state file. */

class SimNotRunningError extends PorterError {
  override readonly code = 'E_SIM_NOT_RUNNING';
}

export async function buy(request: PurchaseRequest, statePath: string): Promise<QueuedPurchase> {
  // Checked here as the route checks it, so a bad name is a usage error (64) before any sim is needed.
  const purchase = purchaseFrom(request);
  if ('refused' in purchase) throw new UsageError(purchase.refused);
  const state = readSimState(statePath);
  if (!state || !isAlive(state.pid)) {
    throw new SimNotRunningError(
      `no sim is running (${state ? `its state file ${statePath} is left from pid ${state.pid}` : `no ${statePath}`}): start one with porter sim`,
    );
  }
  let response: Response;
  try {
    response = await fetch(state.purchasesUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${state.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new SimNotRunningError(
      `the sim (pid ${state.pid}, state ${statePath}) does not answer at ${state.purchasesUrl}: ${messageOf(error)}; start porter sim again`,
    );
  }
  const body = (await response.json().catch(() => ({}))) as Partial<QueuedPurchase> & { error?: string };
  if (response.status === 400) throw new UsageError(body.error ?? 'the sim refused the purchase');
  if (response.status !== 201 || typeof body.id !== 'string') {
    throw new PorterError(`the sim answered ${response.status}${body.error ? `: ${body.error}` : ''}`);
  }
  return body as QueuedPurchase;
}
