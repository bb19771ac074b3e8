import type { SecretBook } from '../../secret-book.js';

/**
 * The API token as the client sends it, and its renewal after a 401: a store owner who rotates
 * the token writes the new one into the token file (or systemd credential) and porter picks it
 * up the first time the old one is refused, instead of stopping with exit 78
 * (docs/design.md#the-api-contract).
 */
export interface TokenRenewal {
  /** The token now, and its generation: 0 for the configured token, +1 for every renewal. */
  current(): { readonly token: string; readonly generation: number };
  /**
   * Called after a 401 to a request sent with generation `refused`. Resolves true when a newer
   * token is there to retry with (read now, or already by a concurrent caller), false when the
   * source holds the same token or none. Concurrent callers share one read.
   */
  renew(refused: number): Promise<boolean>;
  /** Replaces the token by one the caller loaded (a config reload). */
  use(token: string): void;
}

/**
 * `read` returns the token from its source as it is now (undefined when unreadable); absent for
 * tokens that cannot change (environment, inline). Every token held goes into `secrets` the moment
 * it is taken, so a rotated one is scrubbed from every log line and error from then on.
 */
export function tokenRenewal(initial: string, read: (() => Promise<string | undefined>) | undefined, secrets: SecretBook): TokenRenewal {
  let token = initial;
  let generation = 0;
  secrets.add(initial);
  let reading: Promise<boolean> | undefined;

  function use(next: string): void {
    if (next === token) return;
    secrets.add(next);
    token = next;
    generation++;
  }

  async function readOnce(): Promise<boolean> {
    const next = await read?.().catch(() => undefined);
    if (next === undefined || next === token) return false;
    use(next);
    return true;
  }

  return {
    current: () => ({ token, generation }),
    async renew(refused) {
      if (generation > refused) return true;
      reading ??= readOnce().finally(() => {
        reading = undefined;
      });
      await reading;
      return generation > refused;
    },
    use,
  };
}
