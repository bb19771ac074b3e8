/**
 * Polls a condition until it holds or a bound runs out. The bound is there so a broken porter
 * ends the benchmark with a clear error instead of hanging it; a healthy run never reaches it.
 */
export async function until<T>(
  probe: () => T | undefined | false | null,
  what: string,
  options: { timeoutMs?: number; intervalMs?: number; onTimeout?: () => string } = {},
): Promise<T> {
  const { timeoutMs = 60_000, intervalMs = 5 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false && value !== null) return value;
    if (Date.now() > deadline) {
      const extra = options.onTimeout ? `\n${options.onTimeout()}` : '';
      throw new Error(`benchmark: timed out after ${timeoutMs} ms waiting for ${what}${extra}`);
    }
    await sleep(intervalMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
