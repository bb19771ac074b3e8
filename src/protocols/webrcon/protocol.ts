/**
 * Rust WebRCON messages. Requests: `{"Identifier": n, "Message": "<command>", "Name": "<client>"}`.
 * Every frame from the server: `{"Message": "...", "Identifier": n, "Type": "Generic" | "Warning"
 * | "Error" | "Chat" | "Report", "Stacktrace": "..."}`, where the Identifier of a request's answer
 * is the request's, and console output nobody asked for carries 0 (log lines) or -1 (chat).
 */

/** Rust reads Identifier as a C# int. Only ids from 1 up are ours: 0 and below are broadcasts. */
export const MAX_IDENTIFIER = 2_147_483_647;

const CLIENT_NAME = 'porter';

export function encodeRequest(identifier: number, command: string): string {
  return JSON.stringify({ Identifier: identifier, Message: command, Name: CLIENT_NAME });
}

export interface WebRconFrame {
  readonly identifier: number;
  readonly message: string;
  readonly type: string | undefined;
}

/** A server frame, or undefined when it is not one (not JSON, no numeric Identifier). */
export function parseFrame(text: string): WebRconFrame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { Identifier, Message, Type } = value as Record<string, unknown>;
  if (typeof Identifier !== 'number' || !Number.isInteger(Identifier)) return undefined;
  return {
    identifier: Identifier,
    message: typeof Message === 'string' ? Message : Message === undefined || Message === null ? '' : JSON.stringify(Message),
    type: typeof Type === 'string' ? Type : undefined,
  };
}
