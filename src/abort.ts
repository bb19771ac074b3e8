/**
 * A signal that aborts when any of `signals` does, released when the caller is done with it.
 *
 * Not `AbortSignal.any`: its composite stays referenced by each long-lived source signal (the
 * daemon's stop signals, an executor's lifetime) until that source is collected (nodejs/node#55351),
 * so one composite per command or per pull is a slow leak in a daemon that runs for months. Here
 * the listeners are removed on `release()`, and nothing of the call outlives it.
 */
export function linkSignals(...signals: ReadonlyArray<AbortSignal | undefined>): { readonly signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const sources = signals.filter((s): s is AbortSignal => s !== undefined);
  const aborted = sources.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  const listeners = sources.map((source) => {
    const onAbort = () => controller.abort(source.reason);
    source.addEventListener('abort', onAbort, { once: true });
    return () => source.removeEventListener('abort', onAbort);
  });
  return { signal: controller.signal, release: () => listeners.forEach((remove) => remove()) };
}

/** Waits for a shared promise, but lets this caller leave early (rejecting with its reason) when its own signal aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
