import { pino } from 'pino';
import { RconExecutor, type RconExecutorConfig } from '../../../../src/protocols/rcon/executor.js';
import type { FakeRconServer } from '../../../../src/sim/rcon-server.js';

export const silent = pino({ level: 'silent' });

export const PASSWORD = 'hunter2-Secret!';

export function executorConfig(
  server: Pick<FakeRconServer, 'port' | 'flavour'>,
  overrides: Partial<RconExecutorConfig> = {},
): RconExecutorConfig {
  return {
    type: 'rcon',
    host: '127.0.0.1',
    port: server.port,
    password: PASSWORD,
    flavour: server.flavour,
    // Generous: on a loaded machine an answer or a login can take seconds. A test about a
    // deadline sets its own, on a fake clock where it can.
    timeoutMs: 10_000,
    connectTimeoutMs: 10_000,
    maxRequestBytes: 1446,
    ...overrides,
  };
}

/** Fast backoff so reconnect tests take milliseconds, not seconds. */
export function makeExecutor(server: Pick<FakeRconServer, 'port' | 'flavour'>, overrides: Partial<RconExecutorConfig> = {}): RconExecutor {
  return new RconExecutor(executorConfig(server, overrides), { logger: silent, backoff: { initialMs: 20, maxMs: 200 } });
}

export const context = { id: '9007199254740993', serverId: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' };
