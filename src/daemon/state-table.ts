import { PorterError } from '../errors.js';

/** Each state, with the states it may move to: a state diagram as data (docs/design.md#lifecycle draws them). */
export type Moves<S extends string> = Readonly<Record<S, readonly S[]>>;

/** A move the table lacks was demanded: a defect in porter, not in its configuration or its peers. */
export class IllegalMoveError extends PorterError {
  override readonly code = 'E_ILLEGAL_MOVE';
}

/**
 * A state that changes only along its table. `to` is a move that may be refused (a stop came
 * first: the caller acts on the answer); `must` is one the caller's construction guarantees, and
 * throws when it does not hold, so a defect shows instead of leaving a state the diagram lacks.
 */
export class StateTable<S extends string> {
  readonly #moves: Moves<S>;
  readonly #onMove: (from: S, to: S) => void;
  #state: S;

  constructor(moves: Moves<S>, initial: S, onMove: (from: S, to: S) => void = () => {}) {
    this.#moves = moves;
    this.#state = initial;
    this.#onMove = onMove;
  }

  get state(): S {
    return this.#state;
  }

  /** Moves to `next` when the table allows it from here; says whether it did (a refused move changes nothing). */
  to(next: S): boolean {
    if (!this.#moves[this.#state].includes(next)) return false;
    const from = this.#state;
    this.#state = next;
    this.#onMove(from, next);
    return true;
  }

  must(next: S): void {
    if (!this.to(next)) {
      throw new IllegalMoveError(
        `illegal state move ${this.#state} → ${next}: the table allows only ${this.#moves[this.#state].join(', ') || 'none'} from ${this.#state}; this is a defect in porter, please report it with the log`,
      );
    }
  }
}
