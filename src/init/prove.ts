import { pino } from 'pino';
import { systemClock } from '../clock.js';
import { parseConfig } from '../config/load.js';
import { isConfigurationError } from '../errors.js';
import { gameFor } from '../games/registry.js';
import { normalizeIdentifiers } from '../players/normalize.js';
import { onlineText } from '../players/online-text.js';
import { playerReader } from '../players/reader.js';
import { createExecutor } from '../protocols/registry.js';

export type LoginProof =
  | { readonly kind: 'ok'; readonly connected: string; readonly online: string }
  | { readonly kind: 'refused'; readonly message: string }
  | { readonly kind: 'unreachable'; readonly message: string };

/**
 * Logs in to the game server exactly as `porter run` would with `config` (validated by the same
 * schema, so what init writes is what was proven) and reads its player list.
 */
export async function proveLogin(config: unknown, baseDir: string): Promise<LoginProof> {
  const loaded = await parseConfig(config, baseDir, {});
  const server = loaded.servers[0]!;
  const logger = pino({ level: 'silent' });
  const executor = createExecutor(server.executor, { logger, clock: systemClock });
  try {
    await executor.connect(AbortSignal.timeout(15_000));
    const raw = await playerReader(server.players, gameFor(server.players), executor, logger)();
    const { ids } = normalizeIdentifiers(raw);
    return { kind: 'ok', connected: executor.connectedText, online: onlineText(raw, ids, false) };
  } catch (error) {
    const message = (error as Error).message;
    return isConfigurationError(error) ? { kind: 'refused', message } : { kind: 'unreachable', message };
  } finally {
    await executor.close();
  }
}
