/**
 * What one HTTP answer from TShock's REST API says (TShockAPI/Rest/Rest.cs and RestObject.cs).
 * Every answer of TShock is a JSON object whose `status` is an HTTP status written as a string
 * ("200", "400", "403", …), with `error` saying why when it is not "200"; the HTTP status is set
 * to the same number. porter decides on the JSON `status`, and trusts an answer only when it is
 * such an object:
 * - "200" (HTTP 2xx): done, the object is the answer;
 * - "401" / "403": the token is missing, wrong, revoked, or lacks the route's permission;
 * - "5xx": TShock caught an exception while handling the request ("Internal server error."),
 *   which may have come halfway through the command;
 * - any other status: TShock refused the request before running anything ("Missing or empty cmd
 *   parameter", 400; an unknown endpoint, 404).
 * Anything else is not TShock's answer: HTTP 401 / 403 still say the credentials were refused
 * (a proxy in front), any other 4xx says the request was refused before it reached TShock, and
 * the rest (a 2xx that is not JSON, a proxy's 502 page, a JSON "200" under an HTTP error) cannot
 * tell whether the command ran.
 */
export type TShockReply =
  | { readonly kind: 'ok'; readonly object: Readonly<Record<string, unknown>> }
  | { readonly kind: 'rejected'; readonly status: string; readonly reason: string }
  | { readonly kind: 'refused'; readonly status: string; readonly reason: string }
  | { readonly kind: 'server-error'; readonly status: string; readonly reason: string }
  | { readonly kind: 'unreadable'; readonly httpStatus: number };

export function readReply(httpStatus: number, body: string): TShockReply {
  const object = jsonObject(body);
  const status = object === undefined ? undefined : statusOf(object.status);
  if (object === undefined || status === undefined) {
    if (httpStatus === 401 || httpStatus === 403) return { kind: 'rejected', status: String(httpStatus), reason: '' };
    if (httpStatus >= 400 && httpStatus < 500) return { kind: 'refused', status: String(httpStatus), reason: '' };
    return { kind: 'unreadable', httpStatus };
  }
  if (status === '200') return httpStatus >= 200 && httpStatus < 300 ? { kind: 'ok', object } : { kind: 'unreadable', httpStatus };
  const reason = reasonOf(object);
  if (status === '401' || status === '403') return { kind: 'rejected', status, reason };
  if (/^5\d\d$/.test(status)) return { kind: 'server-error', status, reason };
  return { kind: 'refused', status, reason };
}

/**
 * The lines a `/v3/server/rawcmd` answer carries: `response` is the list of messages the command
 * sent to its REST user (TSRestPlayer.GetCommandOutput). Undefined when the object has no such
 * list: then it is not an answer to a command.
 */
export function commandOutput(object: Readonly<Record<string, unknown>>): string[] | undefined {
  const response = object.response;
  if (typeof response === 'string') return [response];
  if (!Array.isArray(response)) return undefined;
  return response.map((line) => (typeof line === 'string' ? line : (JSON.stringify(line) ?? '')));
}

function jsonObject(body: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function statusOf(value: unknown): string | undefined {
  if (typeof value === 'string' && /^\d{3}$/.test(value.trim())) return value.trim();
  if (typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 999) return String(value);
  return undefined;
}

/** `error`, and for a caught exception its `errormsg`; the stack trace stays out of reasons. */
function reasonOf(object: Record<string, unknown>): string {
  const parts = [object.error, object.errormsg, object.response].filter(
    (part): part is string => typeof part === 'string' && part.trim() !== '',
  );
  return parts.join(': ');
}
