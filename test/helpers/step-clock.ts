import type { FakeClock } from './fake-clock.js';
import { waitFor } from './wait-for.js';

/**
 * Waits for a condition while moving a fake clock over the short sleeps in the way (a reconnect
 * backoff), and never over a longer one (a command or connect deadline): a test can let code
 * under test reconnect on a fake clock without any deadline expiring because the machine is slow.
 */
export function stepClockUntil<T>(
  clock: FakeClock,
  probe: () => T | undefined | false | null,
  options: { maxStepMs: number; what: string },
): Promise<T> {
  return waitFor(
    () => {
      const value = probe();
      if (value !== undefined && value !== false && value !== null) return value;
      const next = clock.nextWakeAt;
      if (next !== undefined && next - clock.now() <= options.maxStepMs) clock.set(next);
      return undefined;
    },
    { what: options.what },
  );
}
