import type { FakeRconServer } from '../../src/sim/rcon-server.js';

/** Finds when the game server ran a command, scanning its log only from where it left off. */
export class ExecutedLog {
  readonly #game: FakeRconServer;
  #index = 0;
  readonly #seen = new Map<string, number>();

  constructor(game: FakeRconServer) {
    this.#game = game;
  }

  /** Time the fake RCON server ran `command` (its first run), or undefined if it has not yet. */
  ranAt(command: string): number | undefined {
    const executed = this.#game.executed;
    for (; this.#index < executed.length; this.#index++) {
      const entry = executed[this.#index]!;
      if (!entry.query && !this.#seen.has(entry.command)) this.#seen.set(entry.command, entry.at);
    }
    return this.#seen.get(command);
  }
}
