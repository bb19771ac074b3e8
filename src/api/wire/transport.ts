import { errorCode, NOT_SENT_CODES } from '../../net/http.js';
import { noteOutOfFiles, OUT_OF_FILES_CODES, outOfFilesAdvice } from '../../net/open-files.js';
import { ApiTransportError, describeCall, type CallContext, type TransportFailure } from '../errors.js';

const CLOSED_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const PROTOCOL_CODES = new Set(['UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'HPE_INVALID_CONSTANT', 'UND_ERR_HEADERS_OVERFLOW', 'UND_ERR_INFO']);

function classify(code: string | undefined, name: string | undefined): { failure: TransportFailure; maybeProcessed: boolean } {
  // No socket could be made: nothing was sent, and the cause is this host's open-file limit.
  if (code && OUT_OF_FILES_CODES.has(code)) return { failure: 'open-files', maybeProcessed: false };
  if (code && NOT_SENT_CODES.has(code)) return { failure: 'connect', maybeProcessed: false };
  if (code && CLOSED_CODES.has(code)) return { failure: 'closed', maybeProcessed: false };
  // TLS handshake failures happen before the request is written.
  if (code && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL'))) {
    return { failure: 'tls', maybeProcessed: false };
  }
  if (code && TIMEOUT_CODES.has(code)) return { failure: 'timeout', maybeProcessed: true };
  if (code && RESET_CODES.has(code)) return { failure: 'reset', maybeProcessed: true };
  if ((code && PROTOCOL_CODES.has(code)) || code?.startsWith('HPE_') || name === 'HTTPParserError') {
    return { failure: 'protocol', maybeProcessed: true };
  }
  // Unknown: assume the worst, the request may have been processed.
  return { failure: 'other', maybeProcessed: true };
}

const ADVICE: Record<Exclude<TransportFailure, 'open-files'>, string> = {
  timeout: 'the API did not answer in time; porter retries with backoff (raise api.timeoutMs if the API is slow)',
  reset: 'the connection was closed without an answer; porter retries with backoff',
  connect: 'could not connect; check api.baseUrl and the network; porter retries with backoff',
  tls: 'the TLS handshake failed; check api.baseUrl and the system clock and CA certificates',
  protocol: 'the answer was not valid HTTP; check api.baseUrl points at the Seller API',
  closed: 'the API client was already closed (porter is stopping)',
  'body-too-large': 'the answer was larger than porter accepts; check api.baseUrl points at the Seller API',
  other: 'porter retries with backoff',
};

/**
 * Wraps an undici/Node error. Only the name, code and a scrubbed message are kept: undici errors
 * can hold request headers, and the Authorization header must never reach a log line.
 */
export function toTransportError(
  error: unknown,
  context: CallContext,
  redact: (text: string) => string,
  override?: { failure: TransportFailure; maybeProcessed: boolean; detail: string },
): ApiTransportError {
  const original = error instanceof Error ? error : new Error(String(error));
  const code = errorCode(original);
  const { failure, maybeProcessed } = override ?? classify(code, original.name);
  const detail = override?.detail ?? redact(original.message || code || original.name);
  const cause = new Error(redact(original.message));
  cause.name = original.name;
  if (code) Object.assign(cause, { code });
  const processed = maybeProcessed ? ' (the request may have been processed)' : ' (the request was not sent)';
  noteOutOfFiles(original);
  const advice = failure === 'open-files' ? `${outOfFilesAdvice()}; porter retries with backoff` : ADVICE[failure];
  return new ApiTransportError(`Seller API ${describeCall(context)} failed: ${detail}${processed}: ${advice}`, {
    failure,
    maybeProcessed,
    context,
    cause,
  });
}
