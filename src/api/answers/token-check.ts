import { PorterError } from '../../errors.js';
import type { ApiClient } from '../wire/client.js';
import { ApiTransportError, InvalidTokenError, PlanRequiredError, ScopeMissingError } from '../errors.js';
import { errorForAnswer } from './problem.js';

export interface ServerSummary {
  readonly id: string;
  readonly name: string | undefined;
  readonly type: string | undefined;
  /** Where the store's official RCON connector reaches the game server (RCON servers only). */
  readonly rcon: { readonly host: string; readonly port: number } | undefined;
}

function rconOf(value: unknown): ServerSummary['rcon'] {
  if (!value || typeof value !== 'object') return undefined;
  const { host, port } = value as { host?: unknown; port?: unknown };
  return typeof host === 'string' && host !== '' && Number.isInteger(port) && (port as number) > 0 && (port as number) < 65536
    ? { host, port: port as number }
    : undefined;
}

/**
 * What `GET /v1/seller/servers` says about the token. It claims nothing, so `porter check` can run
 * beside a live daemon. The route needs `servers:read`, which porter does not need: a 403
 * INTEGRATION_SCOPE_MISSING still proves the token is valid (the scope porter needs,
 * commands:execute, can only be proven by a pull, which could claim a command).
 */
type TokenCheck =
  | { readonly ok: true; readonly kind: 'valid'; readonly status: number; readonly servers: readonly ServerSummary[] | undefined }
  | { readonly ok: true; readonly kind: 'valid-scope-unchecked'; readonly status: 403; readonly error: ScopeMissingError }
  | { readonly ok: false; readonly kind: 'invalid-token'; readonly status: 401; readonly error: InvalidTokenError }
  | { readonly ok: false; readonly kind: 'plan-required'; readonly status: 402; readonly error: PlanRequiredError }
  | { readonly ok: false; readonly kind: 'error'; readonly status: number | undefined; readonly error: PorterError };

function serverList(body: string): ServerSummary[] | undefined {
  try {
    const value: unknown = JSON.parse(body);
    if (!Array.isArray(value)) return undefined;
    return value
      .filter(
        (item): item is Record<string, unknown> => !!item && typeof item === 'object' && typeof (item as { id?: unknown }).id === 'string',
      )
      .map((item) => ({
        id: item.id as string,
        name: typeof item.name === 'string' ? item.name : undefined,
        type: typeof item.type === 'string' ? item.type : undefined,
        rcon: rconOf(item.rcon),
      }));
  } catch {
    return undefined;
  }
}

export async function checkToken(client: ApiClient, signal?: AbortSignal): Promise<TokenCheck> {
  const context = { route: 'servers' as const };
  let answer;
  try {
    answer = await client.send({ method: 'GET', path: client.routes.servers(), context, signal });
  } catch (error) {
    if (error instanceof ApiTransportError) return { ok: false, kind: 'error', status: undefined, error };
    throw error;
  }
  if (answer.status >= 200 && answer.status < 300) {
    return { ok: true, kind: 'valid', status: answer.status, servers: serverList(answer.body) };
  }
  const error = errorForAnswer(
    { status: answer.status, body: answer.body, retryAfterMs: answer.rateLimit.retryAfterMs },
    context,
    client.redact,
  );
  if (error instanceof ScopeMissingError) return { ok: true, kind: 'valid-scope-unchecked', status: 403, error };
  if (error instanceof InvalidTokenError) return { ok: false, kind: 'invalid-token', status: 401, error };
  if (error instanceof PlanRequiredError) return { ok: false, kind: 'plan-required', status: 402, error };
  return { ok: false, kind: 'error', status: answer.status, error };
}
