/**
 * Reloads one after another, coalesced: requests that arrive while one runs make one more run,
 * not one each. Nothing runs before `open()`: a SIGHUP while porter starts is applied once it runs.
 */
export class ReloadQueue {
  readonly #run: () => Promise<void>;
  readonly #skip: () => boolean;
  #tail: Promise<void>;
  #open!: () => void;
  #again = false;

  /** `run` must not reject; a request is dropped when `skip()` says so at the time it would run (porter stopping). */
  constructor(run: () => Promise<void>, skip: () => boolean) {
    this.#run = run;
    this.#skip = skip;
    this.#tail = new Promise<void>((resolve) => (this.#open = resolve));
  }

  open(): void {
    this.#open();
  }

  request(): void {
    this.#again = true;
    this.#tail = this.#tail.then(async () => {
      if (!this.#again || this.#skip()) return;
      this.#again = false;
      await this.#run();
    });
  }

  /** Resolves once every reload requested so far has run (never before `open()`). */
  idle(): Promise<void> {
    return this.#tail;
  }
}
