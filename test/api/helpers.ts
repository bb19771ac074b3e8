import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { pino, type Logger } from 'pino';
import type { Config } from '../../src/config/schema.js';
import { SIM_TOKEN } from '../../src/sim/seller-api.js';

export const DEFAULT_ROUTES = {
  pull: '/v1/seller/servers/{serverId}/commands/pull',
  done: '/v1/seller/servers/{serverId}/commands/{id}/done',
  fail: '/v1/seller/servers/{serverId}/commands/{id}/fail',
};

export function apiConfig(baseUrl: string, overrides: Partial<Config['api']> = {}): Config['api'] {
  return {
    baseUrl,
    token: SIM_TOKEN,
    // Generous: on a loaded machine a call to 127.0.0.1 can take seconds. Tests about the
    // deadline set their own, on a fake clock where they can.
    timeoutMs: 30_000,
    budget: { perWindow: 120, windowMs: 60_000, share: 1 },
    routes: DEFAULT_ROUTES,
    ...overrides,
  };
}

export const silent = (): Logger => pino({ level: 'silent' });

/** A logger whose lines land in an array instead of stdout, to assert on what was logged. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

/** The secret must appear nowhere: message, stack, cause chain, own properties. */
export function assertNoSecret(error: unknown, secret: string): void {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    assert.ok(!current.message.includes(secret), `message leaks the secret: ${current.message}`);
    assert.ok(!(current.stack ?? '').includes(secret), 'stack leaks the secret');
    current = current.cause;
  }
  const shown = inspect(error, { depth: 20, showHidden: true });
  assert.ok(!shown.includes(secret), `inspect() leaks the secret: ${shown}`);
}

/** A loopback port nothing listens on (bound then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
