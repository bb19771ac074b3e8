import { OutcomeUnknownError } from '../errors.js';

/**
 * The most answer text porter collects for one command, in UTF-8 bytes, over any network transport.
 * Real answers are far smaller: a Minecraft `give` or `lp` answers in one line, `help` with many
 * plugins in tens of kilobytes, a full player list of 4,096 names in about 100 KB, and srcds'
 * `cvarlist`, about the largest console output there is, in under 1 MB. Only a broken or hostile
 * server sends more, and without a cap porter would hold all of it (GBs) waiting for the end.
 */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * The largest single WebSocket message porter accepts from WebRCON: an answer at the cap, with
 * room for its JSON envelope and escapes (quotes and backslashes double in size). A larger one
 * drops the connection before it is read (undici's maxPayloadSize), since no answer can use it.
 */
export const MAX_WEBSOCKET_MESSAGE_BYTES = 2 * MAX_ANSWER_BYTES;

/** How a cap reads in messages: "4 MiB", "64 KiB", "1000 bytes". */
function describeBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The server kept answering past MAX_ANSWER_BYTES. The command was sent and the server began to
 * answer it, so it may well have run: an outcome-unknown failure, never resent. Whether it
 * succeeded cannot be told, since failure patterns need the whole answer.
 */
export class AnswerTooLargeError extends OutcomeUnknownError {
  override readonly code: string = 'E_ANSWER_TOO_LARGE';

  constructor(where: string, limitBytes: number) {
    super(
      `the answer from ${where} grew over porter's cap of ${describeBytes(limitBytes)} for one answer without ending; ` +
        'porter stopped reading and reset the connection. The command was sent and may have run, so it is not sent again; ' +
        'check the game server (a plugin or mod flooding the console?)',
    );
  }
}
