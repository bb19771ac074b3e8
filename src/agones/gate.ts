import { GateWaiters } from '../gate-waiters.js';
import { decisionFor, type GateDecision } from './state.js';

/**
 * Holds every delivery loop's next pull while the GameServer is not in a state to receive
 * purchases. Unknown (the SDK sidecar not answering yet) holds too: nothing is claimed until a
 * state is known. A pull already in flight is not interrupted: what it claims is run.
 */
export class ClaimGate {
  #state: string | undefined;
  readonly #waiters = new GateWaiters();

  get state(): string | undefined {
    return this.#state;
  }

  get decision(): GateDecision {
    return decisionFor(this.#state);
  }

  /** A new state from the SDK; returns what changed hands for the caller to log. */
  update(state: string | undefined): { before: GateDecision; after: GateDecision } {
    const before = this.decision;
    this.#state = state;
    const after = this.decision;
    if (after === 'claim') {
      this.#waiters.releaseAll();
    }
    return { before, after };
  }

  /** Whether a pull may claim now (asked again right before every pull is sent). */
  isOpen(): boolean {
    return this.decision === 'claim';
  }

  heldBecause(): string {
    return 'claims are held (the Agones GameServer is not Ready, Reserved or Allocated)';
  }

  /** Resolves at once while claims are allowed, else when they are; rejects when `signal` aborts. */
  waitOpen(signal: AbortSignal): Promise<void> {
    if (this.decision === 'claim') return Promise.resolve();
    return this.#waiters.wait(signal);
  }
}
