/**
 * The two things porter reads from a verified event: its `type` and its `eventId`. The payload
 * carries the buyer's personal data under `data.order` (Seller API 5.3, 6): nothing else is kept,
 * logged or passed on, and the parsed object is dropped here.
 */
interface EventFacts {
  readonly type: string | undefined;
  readonly eventId: string | undefined;
}

/** Undefined when the body is not a JSON object. */
export function readEventFacts(body: Uint8Array): EventFacts | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const { type, eventId } = parsed as { type?: unknown; eventId?: unknown };
  return {
    type: typeof type === 'string' ? type : undefined,
    eventId: typeof eventId === 'string' || typeof eventId === 'number' ? String(eventId) : undefined,
  };
}
