import { compileSecrets, scrubbedOrWithheld, type Scrubber } from './scrub.js';

/**
 * Every secret this porter has learned, and the one scrubber that keeps them out of what it
 * writes: log lines, error messages, /healthz and /history bodies, history records, fail reasons
 * sent to the API. The CLI makes one and passes it down; whoever learns a secret adds it here
 * (tokens of every store, game and webhook passwords, a token rotated on disk and read after a
 * 401, the secrets of a reloaded configuration), so every scrubber knows it from the next line on.
 * A secret is never removed: an old token can still turn up in a late error text.
 */
export class SecretBook {
  readonly #secrets = new Set<string>();
  #scrubber: Scrubber | undefined;
  #stale = false;

  constructor(secrets: Iterable<string | undefined> = []) {
    this.add(...secrets);
  }

  /** Learns secrets; empty and undefined values are skipped, so callers can pass optional settings as they are. */
  add(...secrets: readonly (string | undefined)[]): void {
    for (const secret of secrets) {
      if (secret === undefined || secret === '' || this.#secrets.has(secret)) continue;
      this.#secrets.add(secret);
      this.#stale = true;
    }
  }

  values(): readonly string[] {
    return [...this.#secrets];
  }

  /**
   * `text` with every known secret (in its raw, JSON-escaped and URL-encoded forms) replaced by
   * `[Redacted]`, whatever the number and size of the secrets. A function property, so it can be
   * handed on detached from the book. Never throws: should scrubbing fail, the text is withheld whole.
   */
  readonly scrub = (text: string): string => scrubbedOrWithheld(this.#scrub, text);

  readonly #scrub = (text: string): string => {
    if (this.#stale) {
      this.#scrubber = compileSecrets([...this.#secrets]);
      this.#stale = false;
    }
    return this.#scrubber ? this.#scrubber.scrub(text) : text;
  };
}
