import { PorterError } from '../../errors.js';

/** The login did not complete (no answer, nothing listening, cancelled). Retried with backoff. */
export class BattlEyeConnectError extends PorterError {
  override readonly code = 'E_BATTLEYE_CONNECT';
}
