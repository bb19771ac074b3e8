import { PorterError } from '../../errors.js';

/** TCP connect or authentication did not complete (refused, timed out, closed). Retried with backoff. */
export class RconConnectError extends PorterError {
  override readonly code = 'E_RCON_CONNECT';
}

/** The peer sent bytes that are not Source RCON packets (wrong port, TLS, HTTP, corrupt stream). */
export class RconProtocolError extends PorterError {
  override readonly code = 'E_RCON_PROTOCOL';
}
