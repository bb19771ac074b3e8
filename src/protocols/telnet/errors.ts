import { PorterError } from '../../errors.js';

/** TCP connect or the console login did not complete (refused, timed out, closed). Retried with backoff. */
export class TelnetConnectError extends PorterError {
  override readonly code = 'E_TELNET_CONNECT';
}

/** The peer sent something no 7 Days to Die console sends (a line over the length cap). */
export class TelnetProtocolError extends PorterError {
  override readonly code = 'E_TELNET_PROTOCOL';
}
