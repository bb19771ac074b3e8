import { request } from 'node:http';
import { Webhook } from 'standardwebhooks';

/**
 * A webhook sender that behaves like the store's (Seller API 6): the raw body signed with the
 * `standardwebhooks` package (independent of porter's verifier), the three headers, a 10 s
 * answer deadline, redirects not followed (a 3xx is a failure), retries keeping the `eventId`.
 */

export interface Sent {
  /** 0 when no answer came (reset, timeout). */
  readonly status: number;
  readonly body: string;
  readonly error?: string;
}

export interface EventOptions {
  readonly secret: string;
  readonly type?: string;
  readonly eventId?: string;
  readonly webhookId?: string;
  /** ms since the epoch; default now. */
  readonly at?: number;
  readonly buyer?: Record<string, unknown>;
}

let counter = 0;

export function eventBody(options: Pick<EventOptions, 'type' | 'eventId' | 'buyer'>): string {
  return JSON.stringify({
    type: options.type ?? 'order.payment_approved',
    eventId: options.eventId ?? `evt_${process.pid}_${++counter}`,
    createdAt: new Date().toISOString(),
    data: {
      order: {
        id: `ord_${counter}`,
        paymentStatus: 'APPROVED',
        buyer: options.buyer ?? { email: 'buyer@example.com', name: 'A Buyer', accountIdentifier: 'Steve' },
      },
    },
  });
}

/** A whsec_ secret is base64 of the key; any other text is the key's own bytes (docs/design.md#webhook-wake-ups). */
function signer(secret: string): Webhook {
  return secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
}

export function signedHeaders(secret: string, body: string, webhookId?: string, at?: number): Record<string, string> {
  const id = webhookId ?? `msg_${process.pid}_${++counter}`;
  const when = new Date(at ?? Date.now());
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(when.getTime() / 1000)),
    'webhook-signature': signer(secret).sign(id, when, body),
  };
}

export function post(url: string, body: string | Buffer, headers: Record<string, string>, timeoutMs = 10_000): Promise<Sent> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('TRANSPORT_TIMEOUT')));
    req.on('error', (error) => resolve({ status: 0, body: '', error: error.message }));
    req.end(body);
  });
}

/** Sends a signed event; retries (up to 5 attempts, as the store does) keep the webhook-id and eventId. */
export async function sendEvent(url: string, options: EventOptions & { attempts?: number }): Promise<Sent[]> {
  const body = eventBody(options);
  const headers = signedHeaders(options.secret, body, options.webhookId, options.at);
  const answers: Sent[] = [];
  for (let attempt = 0; attempt < (options.attempts ?? 5); attempt++) {
    const answer = await post(url, body, headers);
    answers.push(answer);
    if (answer.status >= 200 && answer.status < 300) break;
  }
  return answers;
}
