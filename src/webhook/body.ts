import type { IncomingMessage } from 'node:http';
import { startDeadline, type Clock } from '../clock.js';

type BodyRead = { readonly ok: true; readonly body: Buffer } | { readonly ok: false; readonly reason: 'too-large' | 'timeout' | 'aborted' };

/**
 * The raw body, exactly as sent (the signature covers these bytes), at most `maxBytes` of it and
 * within `deadlineMs`: a client that announces a small body and trickles it, or streams an
 * endless chunked one, is cut off. Counts the bytes that arrive, whatever Content-Length said.
 */
export function readBody(request: IncomingMessage, maxBytes: number, deadlineMs: number, clock: Clock): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyRead) => {
      cancel();
      request.off('data', onData).off('end', onEnd).off('error', onAborted).off('close', onAborted);
      if (!result.ok) request.pause();
      resolve(result);
    };
    const cancel = startDeadline(clock, deadlineMs, () => finish({ ok: false, reason: 'timeout' }));
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish({ ok: false, reason: 'too-large' });
      else chunks.push(chunk);
    };
    const onEnd = () => finish({ ok: true, body: Buffer.concat(chunks, size) });
    const onAborted = () => {
      if (!request.complete) finish({ ok: false, reason: 'aborted' });
    };
    request.on('data', onData).on('end', onEnd).on('error', onAborted).on('close', onAborted);
  });
}
