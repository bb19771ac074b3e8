/**
 * What became of one request to the webhook listener, for the log and the
 * `porter_webhook_events_total{outcome}` counter (docs/operations.md#get-metrics). Only `woken` woke
 * anything; every `refused_*` answered non-2xx and read nothing from the body.
 */
export const WEBHOOK_OUTCOMES = [
  'woken',
  'replayed',
  'ignored_type',
  'unreadable',
  'refused_signature',
  'refused_timestamp',
  'refused_too_large',
  'refused_not_found',
  'refused_method',
  'refused_timeout',
] as const;

export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];
