import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics } from '../../src/health/metrics.js';
import { WEBHOOK_OUTCOMES } from '../../src/webhook/outcome.js';
import { manualClock, parseMetrics, sample } from './fakes.js';

describe('porter_webhook_events_total', () => {
  test('with a webhook listener every outcome shows from 0, and each event counts under its outcome', async () => {
    const metrics = createMetrics({ clock: manualClock(), processMetrics: false, webhook: true });
    let samples = parseMetrics(await metrics.registry.metrics());
    for (const outcome of WEBHOOK_OUTCOMES) assert.equal(sample(samples, 'porter_webhook_events_total', { outcome }), 0, outcome);
    metrics.webhookEvent('woken');
    metrics.webhookEvent('refused_signature');
    metrics.webhookEvent('refused_signature');
    samples = parseMetrics(await metrics.registry.metrics());
    assert.equal(sample(samples, 'porter_webhook_events_total', { outcome: 'woken' }), 1);
    assert.equal(sample(samples, 'porter_webhook_events_total', { outcome: 'refused_signature' }), 2);
  });

  test('without one, the counter has no samples', async () => {
    const metrics = createMetrics({ clock: manualClock(), processMetrics: false });
    assert.equal(sample(parseMetrics(await metrics.registry.metrics()), 'porter_webhook_events_total', { outcome: 'woken' }), undefined);
  });
});
