import { CommandRefusedError } from '../../errors.js';
import { assertSingleLine } from '../executor.js';

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
