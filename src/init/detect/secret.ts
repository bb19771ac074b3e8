import { inspect } from 'node:util';

const HIDDEN = '[hidden]';

/**
 * A password read from a game's settings. Only `reveal()` gives the value: printing the object in
 * any way (template string, JSON, console.log) shows "[hidden]", so a detection can be logged or
 * dumped without leaking it.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  /** What the user is shown instead of the value: "set (12 characters)". */
  describe(): string {
    const characters = [...this.#value].length;
    return `set (${characters} character${characters === 1 ? '' : 's'})`;
  }

  toString(): string {
    return HIDDEN;
  }

  toJSON(): string {
    return HIDDEN;
  }

  [inspect.custom](): string {
    return `Secret(${HIDDEN})`;
  }
}
