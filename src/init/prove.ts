import { pino } from 'pino';
import { systemClock } from '../clock.js';
import { parseConfig } from '../config/load.js';
import { isConfigurationError, messageOf } from '../errors.js';
import { gameFor } from '../games/registry.js';
import { normalizeIdentifiers } from '../players/normalize.js';
import { onlineText } from '../players/online-text.js';
import { playerReader } from '../players/reader.js';
import { createExecutor } from '../protocols/executor-registry.js';

type LoginProof =
  | { readonly kind: 'ok'; readonly connected: string; readonly online: string }
  | { readonly kind: 'refused'; readonly message: string }
  /** `reason`: what the network said, without the daemon's advice about config keys init has not written yet. */
  | { readonly kind: 'unreachable'; readonly message: string; readonly reason: string };

/**
 * Logs in to the game server exactly as `porter run` would with `config` (validated by the same
 * schema, so what init writes is what was proven) and reads its player list.
 */
export async function proveLogin(config: unknown, baseDir: string): Promise<LoginProof> {
  const loaded = await parseConfig(config, baseDir, {});
  const server = loaded.servers[0]!;
  const logger = pino({ level: 'silent' });
  const game = gameFor(server.players);
  // A rejected password names where this game keeps it, as porter check and porter run do.
  const executor = await createExecutor(server.executor, { logger, clock: systemClock, passwordHint: game.rconPassword });
  try {
    await executor.connect(AbortSignal.timeout(15_000));
    const raw = await playerReader(server.players, game, executor, logger)();
    const { ids } = normalizeIdentifiers(raw);
    return { kind: 'ok', connected: executor.connectedText, online: onlineText(raw, ids, false) };
  } catch (error) {
    const message = messageOf(error);
    return isConfigurationError(error) ? { kind: 'refused', message } : { kind: 'unreachable', message, reason: networkReason(error) };
  } finally {
    await executor.close();
  }
}

const REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused: nothing listens on that port',
  ECONNRESET: 'the connection was closed',
  ETIMEDOUT: 'no answer',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the network cannot be reached',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up',
};

/** The socket's own reason (ECONNREFUSED, …) from the error or its causes; else the first part of the message. */
function networkReason(error: unknown): string {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code !== undefined && REASONS[code] !== undefined) return REASONS[code];
    if (cause.name === 'TimeoutError') return 'no answer within 15 s';
  }
  return messageOf(error).split('; ')[0]!;
}
