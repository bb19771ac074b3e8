import {
  SellerApiServer,
  type ApiExchange,
  type FakeSellerApi as PlainSellerApi,
  type SellerApiOptions,
  type SimRoute,
} from '../seller-api.js';
import { windowKey } from '../seller-api-limits.js';
import { describeFault, FaultPlan, type Fault } from './seller-api-faults.js';

export { SIM_SERVER_ID, SIM_TOKEN, type SellerApiOptions } from '../seller-api.js';
export type { Fault } from './seller-api-faults.js';

/**
 * The simulated Seller API with what only tests and benchmarks do to it: faults played on the next
 * requests of a route (a 5xx, a reset, a lost answer, a delay, hostile bodies and headers), and
 * calls spent from a route's budget as another connector would. porter demo never loads it.
 */
export interface FakeSellerApi extends PlainSellerApi {
  /** Plays `fault` on the next `times` requests of `route` (optionally of one server only); `times: Infinity` until cleared. */
  inject(route: SimRoute, fault: Fault, options?: { times?: number; serverId?: string }): void;
  /** Drops the faults not played yet (of one server, when given). */
  clearFaults(serverId?: string): void;
  /** Spends `n` calls of a route's window, as the official connector would. */
  spend(serverId: string, route: 'pull' | 'done' | 'fail', n: number): void;
}

export async function startSellerApi(options: SellerApiOptions = {}): Promise<FakeSellerApi> {
  const api = new FaultySellerApi(options);
  await api.listen();
  return api;
}

class FaultySellerApi extends SellerApiServer implements FakeSellerApi {
  readonly #faults = new FaultPlan();

  inject(route: SimRoute, fault: Fault, options?: { times?: number; serverId?: string }): void {
    this.#faults.add(route, fault, options);
  }

  clearFaults(serverId?: string): void {
    this.#faults.clear(serverId);
  }

  spend(serverId: string, route: 'pull' | 'done' | 'fail', n: number): void {
    this.windows.spend(windowKey(serverId, route), n, this.clock.now());
  }

  protected override async serve(exchange: ApiExchange): Promise<void> {
    const fault = this.#faults.take(exchange.route, exchange.serverId);
    if (fault === undefined) return super.serve(exchange);
    const described = describeFault(fault);
    if (fault === 'reset') return exchange.reset(described);
    if (fault === '500' || fault === '503') {
      const code = fault === '500' ? 'INTERNAL_ERROR' : 'SERVICE_UNAVAILABLE';
      return exchange.send(exchange.problem(Number(fault), code, 'simulated failure'), described);
    }
    if (fault === 'malformed') return exchange.send(exchange.answer(200, '{"id": 12, "command": "say hel', 'application/json'), described);
    if (fault === 'claim-then-reset') {
      exchange.handle();
      return exchange.reset(described);
    }
    if ('body' in fault) {
      const answer = exchange.answer(fault.status ?? 200, fault.body, fault.contentType ?? 'application/json');
      Object.assign(answer.headers, fault.headers);
      return exchange.send(answer, described);
    }
    if ('delay' in fault) {
      try {
        await this.clock.sleep(fault.delay, exchange.closing);
      } catch {
        return; // closing
      }
      return exchange.send(exchange.handle(), described);
    }
    const answer = exchange.handle();
    Object.assign(answer.headers, fault.headers);
    return exchange.send(answer, described);
  }
}
