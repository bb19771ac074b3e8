import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { Budget } from '../../../src/api/budget/budget.js';
import type { ApiClient, ApiRequest, ApiResponse } from '../../../src/api/wire/client.js';
import { createRoutePaths, parseBaseUrl } from '../../../src/api/wire/routes.js';
import { createServerApi } from '../../../src/api/server-api.js';
import { SecretBook } from '../../../src/secret-book.js';
import { tokenRenewal } from '../../../src/api/wire/token.js';
import { FakeClock, flush } from '../../helpers/fake-clock.js';
import { fcOptions } from '../../helpers/fc-options.js';
import { DEFAULT_ROUTES } from '../helpers.js';

/**
 * The token is rotated under porter at any moment, its file is rewritten or not, and the API
 * answers 200, 204 or 401 in any order: a call is sent again only after a 401 that found a newer
 * token, at most once, and every send, the repeats included, keeps within the budget in every
 * rolling window.
 */

const PER_WINDOW = 4;
const WINDOW_MS = 1000;
const SERVER = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';

const step = fc.record({ answer: fc.constantFrom<200 | 204 | 401>(200, 204, 401, 401), rotateFile: fc.boolean() });

test('401s and rotations in any order: a repeat only after a renewed token, at most once per call, always within the budget', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 12 }), async (steps, pulls) => {
      const clock = new FakeClock();
      let fileToken = 'gci_token_0';
      let generationOnDisk = 0;
      const renewal = tokenRenewal(fileToken, () => Promise.resolve(fileToken), new SecretBook());
      const sends: Array<{ at: number; token: string; status: number }> = [];
      let next = 0;
      const client: ApiClient = {
        routes: createRoutePaths(DEFAULT_ROUTES, parseBaseUrl('https://seller.example.com')),
        redact: (text) => text,
        renewToken: (generation) => renewal.renew(generation),
        useToken: (token) => renewal.use(token),
        close: () => Promise.resolve(),
        send(request: ApiRequest): Promise<ApiResponse> {
          const { token, generation } = renewal.current();
          const { answer, rotateFile } = steps[next++ % steps.length]!;
          // The owner rotates: the old token stops working and the file may (or may not yet) hold the new one.
          if (rotateFile) fileToken = `gci_token_${++generationOnDisk}`;
          sends.push({ at: clock.now(), token, status: answer });
          const body = answer === 200 ? `{"id": ${next}, "command": "say ${request.context.route}"}` : '';
          return Promise.resolve({
            status: answer,
            body,
            elapsedMs: 0,
            tokenGeneration: generation,
            rateLimit: { remaining: undefined, limit: undefined, retryAfterMs: undefined },
          });
        },
      };
      const budget = new Budget({ perWindow: PER_WINDOW, windowMs: WINDOW_MS, share: 1 }, clock);
      const api = createServerApi({ client, serverId: SERVER, budget, clock, logger: pino({ level: 'silent' }) });

      for (let i = 0; i < pulls; i++) {
        const before = sends.length;
        let settled = false;
        const call = api.pull([]).then(
          () => (settled = true),
          () => (settled = true),
        );
        while (!settled) {
          await flush();
          const wake = clock.nextWakeAt;
          if (!settled && wake !== undefined) clock.set(Math.max(wake, clock.now()));
        }
        await call;
        const mine = sends.slice(before);
        assert.ok(mine.length >= 1 && mine.length <= 2, `one call sent ${mine.length} times`);
        if (mine.length === 2) {
          assert.equal(mine[0]!.status, 401, 'only a 401 is sent again');
          assert.notEqual(mine[1]!.token, mine[0]!.token, 'and only with another token');
        }
      }
      for (const send of sends) {
        const inWindow = sends.filter((other) => other.at > send.at - WINDOW_MS && other.at <= send.at).length;
        assert.ok(inWindow <= PER_WINDOW, `${inWindow} sends within ${WINDOW_MS} ms up to ${send.at}`);
      }
    }),
    fcOptions({ numRuns: 200 }),
  );
});
