import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { Budget } from '../../src/api/budget/budget.js';
import type { ApiClient, ApiRequest, ApiResponse } from '../../src/api/wire/client.js';
import { ApiTransportError } from '../../src/api/errors.js';
import { PullBodyScanner } from '../../src/api/wire/pull-scan.js';
import { createRoutePaths, parseBaseUrl } from '../../src/api/wire/routes.js';
import { createServerApi } from '../../src/api/server-api.js';
import { Journal, readJournal } from '../../src/delivery/journal/journal.js';
import type { SettledDelivery } from '../../src/delivery/history/history-record.js';
import { DeliveryLoop } from '../../src/delivery/loop.js';
import type { Executor } from '../../src/protocols/executor.js';
import { FakeClock, runClockUntil } from '../helpers/fake-clock.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * A claim porter cannot run is still settled and never wedges the server (docs/design.md#dont-claim-what-cannot-run), on the
 * fake clock, through the real server API (answer parsing, oversized scan, report errors) and the
 * real delivery loop, against a fake HTTP client. Over any pull body (any JSON, any id, commands
 * over the answer cap, any key order) and any report answer (2xx, 400, 404, 409, 422, 500, no
 * answer), porter runs and reports a claim, fails it with a reason, or — only when it cannot read
 * a usable id — logs it and goes on. Whatever came before, a good claim pulled last is delivered.
 */

const SERVER = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
/** The client's answer cap, small so that an oversized command is cheap to generate. */
const CAP = 2_048;
const SENTINEL = '9223372036854775807';

type IdKind = 'number' | 'string' | 'negative' | 'fraction' | 'exponent' | 'huge' | 'letters' | 'null' | 'bool' | 'object';
type CommandKind = 'short' | 'oversized' | 'absent' | 'number' | 'object';
type ReportAnswer = 200 | 204 | 400 | 404 | 409 | 422 | 500 | 'no-answer';

interface ClaimPlan {
  readonly kind: 'claim';
  readonly id: IdKind;
  readonly command: CommandKind;
  readonly idFirst: boolean;
  readonly extra: readonly (readonly [string, fc.JsonValue])[];
}
type PullPlan = ClaimPlan | { readonly kind: 'json'; readonly text: string } | { readonly kind: 'malformed'; readonly text: string };

const USABLE: ReadonlySet<IdKind> = new Set(['number', 'string']);
const FINAL: ReadonlySet<ReportAnswer> = new Set([200, 204, 400, 404, 409, 422]);

function idText(kind: IdKind, n: number): string {
  switch (kind) {
    case 'number':
      return String(1000 + n);
    case 'string':
      return `"${1000 + n}"`;
    case 'negative':
      return String(-1 - n);
    case 'fraction':
      return `${n}.5`;
    case 'exponent':
      return `${n + 1}e3`;
    case 'huge':
      return '9'.repeat(25);
    case 'letters':
      return '"abc"';
    case 'null':
      return 'null';
    case 'bool':
      return 'true';
    case 'object':
      return `{"id":${1000 + n}}`;
  }
}

function commandText(kind: CommandKind, n: number): string | undefined {
  switch (kind) {
    case 'short':
      return JSON.stringify(`say claim-${n}`);
    case 'oversized':
      return JSON.stringify(`say ${'é'.repeat(CAP)}`);
    case 'absent':
      return undefined;
    case 'number':
      return '42';
    case 'object':
      return '{"text":"say hi"}';
  }
}

function bodyOf(plan: ClaimPlan, n: number): string {
  const members = plan.extra
    .filter(([key]) => key !== 'id' && key !== 'command')
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  const id = `"id":${idText(plan.id, n)}`;
  const command = commandText(plan.command, n);
  const own = command === undefined ? [id] : plan.idFirst ? [id, `"command":${command}`] : [`"command":${command}`, id];
  return `{${[...own, ...members].join(',')}}`;
}

class World {
  readonly clock = new FakeClock();
  readonly pulls: string[];
  /** Usable ids pulled, with what porter must do: run it, or fail it without running. */
  readonly expected = new Map<string, 'run' | 'fail' | 'oversized'>();
  readonly reports = new Map<string, Array<{ route: 'done' | 'fail'; reason?: string; answer: ReportAnswer }>>();
  readonly runs: string[] = [];
  readonly history: SettledDelivery[] = [];
  #pull = 0;
  #report = 0;

  constructor(
    plans: readonly PullPlan[],
    readonly answers: readonly ReportAnswer[],
  ) {
    this.pulls = plans.map((plan, n) => {
      if (plan.kind !== 'claim') return plan.text;
      const body = bodyOf(plan, n);
      if (USABLE.has(plan.id)) {
        const id = String(1000 + n);
        this.expected.set(id, plan.command === 'oversized' ? 'oversized' : plan.command === 'short' ? 'run' : 'fail');
      }
      return body;
    });
    this.pulls.push(`{"command":"say sentinel","id":${SENTINEL}}`);
    this.expected.set(SENTINEL, 'run');
  }

  get sentinelDone(): boolean {
    return (this.reports.get(SENTINEL) ?? []).some((r) => r.route === 'done' && FINAL.has(r.answer));
  }

  client(): ApiClient {
    const base = parseBaseUrl('https://seller.example.com');
    const routes = createRoutePaths(
      {
        pull: '/v1/seller/servers/{serverId}/commands/pull',
        done: '/v1/seller/servers/{serverId}/commands/{id}/done',
        fail: '/v1/seller/servers/{serverId}/commands/{id}/fail',
      },
      base,
    );
    const answer = (status: number, body = ''): ApiResponse => ({
      status,
      body,
      elapsedMs: 1,
      tokenGeneration: 0,
      rateLimit: { remaining: undefined, limit: undefined, retryAfterMs: undefined },
    });
    return {
      routes,
      redact: (text) => text,
      renewToken: async () => false,
      useToken: () => undefined,
      close: async () => undefined,
      send: async (request: ApiRequest): Promise<ApiResponse> => {
        const { route, commandId } = request.context;
        if (route === 'pull') {
          const body = this.pulls[this.#pull++];
          if (body === undefined) return answer(204);
          // What client.ts does with an answer over its cap.
          if (Buffer.byteLength(body) > CAP && request.scanOversized) {
            const scanner = new PullBodyScanner();
            scanner.write(Buffer.from(body));
            return { ...answer(200), oversized: scanner.result(CAP) };
          }
          return answer(200, body);
        }
        const id = commandId!;
        const given = this.answers[this.#report++] ?? 200;
        const list = this.reports.get(id) ?? [];
        this.reports.set(id, list);
        const reason = route === 'fail' ? (request.json as { error: string }).error : undefined;
        list.push({ route: route as 'done' | 'fail', ...(reason === undefined ? {} : { reason }), answer: given });
        if (given === 'no-answer') {
          throw new ApiTransportError('reset', { failure: 'reset', maybeProcessed: true, context: request.context });
        }
        return answer(given, given >= 400 ? JSON.stringify({ status: given, code: 'SOME_CODE', detail: 'free text from the API' }) : '');
      },
    };
  }

  executor(): Executor {
    return {
      connectedText: 'a fake game server',
      connect: async () => undefined,
      isReady: () => true,
      waitReady: async () => undefined,
      execute: async (command: string, context: { id: string }) => {
        this.runs.push(context.id);
        return `ran ${command.slice(0, 20)}`;
      },
      query: async () => '',
      stats: () => ({ connected: true, reconnects: 0 }),
      close: async () => undefined,
    };
  }
}

const idKind = fc.constantFrom<IdKind>(
  'number',
  'number',
  'string',
  'negative',
  'fraction',
  'exponent',
  'huge',
  'letters',
  'null',
  'bool',
  'object',
);
const commandKind = fc.constantFrom<CommandKind>('short', 'short', 'oversized', 'absent', 'number', 'object');
const pullPlan: fc.Arbitrary<PullPlan> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('claim' as const),
      id: idKind,
      command: commandKind,
      idFirst: fc.boolean(),
      extra: fc.array(fc.tuple(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })), { maxLength: 3 }),
    }),
  },
  // Any JSON at all: porter must survive it; if it names a claim, the checks below still hold.
  {
    weight: 1,
    arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ kind: 'json' as const, text: JSON.stringify(value) ?? 'null' })),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((text) => ({ kind: 'malformed' as const, text: `{"id": 5, ${text}` })) },
);
const reportAnswer = fc.constantFrom<ReportAnswer>(200, 200, 204, 400, 404, 409, 422, 500, 'no-answer');

describe('claims porter cannot run (property)', () => {
  test('every claim with a usable id is run or failed and settled; no report without end; the server always goes on', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(pullPlan, { maxLength: 8 }), fc.array(reportAnswer, { maxLength: 12 }), async (plans, answers) => {
        const dir = mkdtempSync(join(tmpdir(), 'porter-claims-prop-'));
        const world = new World(plans, answers);
        const clock = world.clock;
        const logger = pino({ level: 'silent' });
        const api = createServerApi({
          client: world.client(),
          serverId: SERVER,
          budget: new Budget({ perWindow: 100_000, windowMs: 60_000, share: 1 }, clock),
          clock,
          logger,
        });
        const journal = new Journal(dir, { now: () => clock.now() });
        const loop = new DeliveryLoop({
          serverId: SERVER,
          api,
          executor: world.executor(),
          players: { get: async () => [] },
          journal,
          policy: { check: () => ({ ok: true }) },
          failureIn: () => null,
          idleDelay: () => 1000,
          pullDelay: () => 0,
          notSentRetryMs: 200,
          clock,
          logger,
          history: { record: (delivery) => void world.history.push(delivery) },
        });
        const stop = new AbortController();
        let stopped: unknown;
        const running = loop.run({ stop: stop.signal, hard: new AbortController().signal }).catch((error: unknown) => {
          stopped = error;
        });
        try {
          const delivered = await runClockUntil(clock, () => world.sentinelDone || stopped !== undefined, 3_600_000);
          assert.equal(stopped, undefined, `the loop stopped: ${String(stopped)}`);
          assert.ok(delivered, `the good claim after everything was not delivered: ${JSON.stringify([...world.reports])}`);
          // An idle pull writes the settled removals.
          await runClockUntil(clock, () => false, 2_000);

          for (const [id, what] of world.expected) {
            const reports = world.reports.get(id) ?? [];
            assert.ok(reports.length > 0, `claim ${id} was never reported`);
            const finals = reports.filter((r) => FINAL.has(r.answer));
            assert.equal(finals.length, 1, `claim ${id}: ${JSON.stringify(reports)}`);
            assert.equal(reports.at(-1), finals[0], `claim ${id} was reported again after a final answer`);
            const ran = world.runs.filter((r) => r === id).length;
            if (what === 'run') assert.equal(ran, 1, `claim ${id} ran ${ran} times`);
            else {
              assert.equal(ran, 0, `claim ${id} ran but could not be`);
              assert.ok(reports.every((r) => r.route === 'fail'));
            }
            if (what === 'oversized') {
              assert.match(reports[0]!.reason ?? '', /^command of \d+ bytes exceeds porter's limit of 2048 bytes/);
            }
            const answer = finals[0]!.answer;
            if (answer === 400 || answer === 422) {
              const record = world.history.find((h) => h.id === id && h.reportRefused !== undefined);
              assert.equal(record?.reportRefused, `${answer} SOME_CODE`, `claim ${id}: the refused report is not in the history`);
            }
          }
          // A report only ever goes to an id porter could name from a pull.
          for (const id of world.reports.keys()) {
            assert.ok(/^\d+$/.test(id), `a report went to ${id}`);
          }
          for (const id of world.runs) assert.ok(world.expected.get(id) === 'run' || !world.expected.has(id), `claim ${id} ran`);
          assert.ok(new Set(world.runs).size === world.runs.length, 'a command ran twice');
          assert.deepEqual(readJournal(dir), [], 'a claim is still owed a report in the journal');
        } finally {
          stop.abort();
          await runClockUntil(clock, () => false, 5_000);
          await running;
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      fcOptions({ numRuns: 120 }),
    );
  });
});
