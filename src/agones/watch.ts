import { request, type IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { backoffDelay, type BackoffPolicy } from '../net/backoff.js';
import { messageOf } from '../errors.js';

/**
 * Follows the GameServer's state through the Agones SDK's HTTP gateway on localhost
 * (`GET /watch/gameserver`: one JSON object `{"result": GameServer}` per line, for as long as the
 * connection lasts; sdks/swagger/sdk.swagger.json in googleforgames/agones). The SDK sidecar may
 * start after porter, and the stream may end: both are retried with backoff, and every
 * (re)connection first reads `GET /gameserver`, so a state that changed in between is not missed.
 */
interface GameServerWatchOptions {
  readonly port: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Every state read, repeated or not. */
  readonly onState: (state: string | undefined) => void;
  readonly signal: AbortSignal;
}

/** The gateway answers on localhost at once; a stuck connect or first byte means it is not up. */
const CONNECT_TIMEOUT_MS = 5_000;
/** A GameServer is a few KiB; a line longer than this is not one. */
const MAX_LINE_BYTES = 1024 * 1024;
const RETRY: BackoffPolicy = { initialMs: 500, maxMs: 5_000 };

export async function watchGameServer(options: GameServerWatchOptions): Promise<void> {
  const { clock, logger, signal } = options;
  let failures = 0;
  while (!signal.aborted) {
    try {
      options.onState(stateOf(JSON.parse(await get(options.port, '/gameserver', signal)) as unknown));
      if (failures > 0)
        logger.info({ event: 'agones.sdk.back', port: options.port }, 'Agones SDK answers again: following the GameServer state');
      failures = 0;
      await follow(options);
    } catch (error) {
      if (signal.aborted) return;
      failures++;
      const wait = backoffDelay(failures, RETRY);
      if (failures === 1) {
        logger.warn(
          { event: 'agones.sdk.unreachable', port: options.port, err: messageOf(error), retryInMs: wait },
          'Agones SDK not answering on localhost (AGONES_SDK_HTTP_PORT): claiming nothing until it does; retrying',
        );
      }
      await clock.sleep(wait, signal).catch(() => undefined);
    }
  }
}

/** The state in a GameServer object as the gateway sends it (proto field names). */
function stateOf(gameServer: unknown): string | undefined {
  const status = (gameServer as { status?: { state?: unknown } } | null)?.status;
  return typeof status?.state === 'string' ? status.state : undefined;
}

function open(port: number, path: string, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', signal, timeout: CONNECT_TIMEOUT_MS }, (response) => {
      req.setTimeout(0);
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`GET ${path} answered ${response.statusCode}`));
        return;
      }
      resolve(response);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within ${CONNECT_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

async function get(port: number, path: string, signal: AbortSignal): Promise<string> {
  const response = await open(port, path, signal);
  let body = '';
  for await (const chunk of response as AsyncIterable<Buffer>) {
    body += chunk.toString('utf8');
    if (body.length > MAX_LINE_BYTES) throw new Error(`GET ${path}: answer over ${MAX_LINE_BYTES} bytes`);
  }
  return body;
}

/** Reads the watch stream until it ends; each complete line is one update. */
async function follow(options: GameServerWatchOptions): Promise<void> {
  const response = await open(options.port, '/watch/gameserver', options.signal);
  let partial = '';
  for await (const chunk of response as AsyncIterable<Buffer>) {
    partial += chunk.toString('utf8');
    if (partial.length > MAX_LINE_BYTES) throw new Error(`watch stream: a line over ${MAX_LINE_BYTES} bytes`);
    let newline: number;
    while ((newline = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, newline).trim();
      partial = partial.slice(newline + 1);
      if (line === '') continue;
      const update = JSON.parse(line) as { result?: unknown; error?: { message?: unknown } };
      if (update.error !== undefined) throw new Error(`watch stream error: ${String(update.error.message)}`);
      options.onState(stateOf(update.result));
    }
  }
  throw new Error('the watch stream ended');
}
