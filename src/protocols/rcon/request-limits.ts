import { CommandRefusedError } from '../../errors.js';
import { assertSingleLine } from '../executor.js';

/**
 * Minecraft reads a request with one 1,460-byte read and closes the connection when the read is
 * not exactly one packet: 1,460 minus 14 bytes of framing leaves 1,446 bytes of command.
 */
export const MINECRAFT_MAX_REQUEST_BYTES = 1446;

/**
 * Refuses, before anything is sent, a command the server would mishandle: CR/LF/NUL could start
 * a second command, and an oversized request makes Minecraft drop the connection mid-command.
 * Throws CommandRefusedError.
 */
export function assertSendable(command: string, maxRequestBytes: number): void {
  assertSingleLine(command);
  const bytes = Buffer.byteLength(command, 'utf8');
  if (bytes > maxRequestBytes) {
    throw new CommandRefusedError(
      `command is ${bytes} bytes, over the RCON request limit of ${maxRequestBytes} bytes (maxRequestBytes), and was not sent; ` +
        'shorten the command in the store, or raise maxRequestBytes if this game server accepts longer requests',
    );
  }
}
