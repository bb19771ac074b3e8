import type { SimRoute } from '../seller-api.js';

/** Faults the simulated Seller API can play on the next requests of a route (tests, bench). */
export type Fault =
  /** Answer with a problem+json 500 / 503 (the request counts against the budget, nothing else happens). */
  | '500'
  | '503'
  /** Destroy the socket without answering and without handling the request. */
  | 'reset'
  /** 200 with a truncated JSON body; nothing is claimed or settled. */
  | 'malformed'
  /** Handle the request (a pull claims, a report settles), then destroy the socket: the lost answer. */
  | 'claim-then-reset'
  /** Wait, then handle the request normally, even if the client gave up meanwhile. */
  | { readonly delay: number }
  /**
   * Answer with this raw body (default status 200, application/json); nothing is claimed or
   * settled. `headers` are set on the answer last, over the rate-limit headers.
   */
  | { readonly body: string; readonly status?: number; readonly contentType?: string; readonly headers?: Readonly<Record<string, string>> }
  /** Handle the request normally, then answer with these headers set over the real ones (hostile rate-limit headers). */
  | { readonly headers: Readonly<Record<string, string>> };

interface Pending {
  readonly route: SimRoute;
  readonly serverId: string | undefined;
  readonly fault: Fault;
  left: number;
}

export function describeFault(fault: Fault): string {
  if (typeof fault === 'string') return fault;
  if ('delay' in fault) return `delay ${fault.delay} ms`;
  const headers = fault.headers ? ` headers ${JSON.stringify(fault.headers)}` : '';
  return 'body' in fault ? `body (${fault.status ?? 200})${headers}` : `normal answer,${headers}`;
}

export class FaultPlan {
  #pending: Pending[] = [];

  add(route: SimRoute, fault: Fault, options: { times?: number; serverId?: string } = {}): void {
    this.#pending.push({ route, serverId: options.serverId, fault, left: options.times ?? 1 });
  }

  /** Drops every planned fault (of one server, when given): a store's outage is over. */
  clear(serverId?: string): void {
    this.#pending = this.#pending.filter((p) => serverId !== undefined && p.serverId !== serverId);
  }

  /** The fault for this request, if one is planned; faults are used in the order they were added. */
  take(route: SimRoute, serverId: string | undefined): Fault | undefined {
    const entry = this.#pending.find((p) => p.route === route && (p.serverId === undefined || p.serverId === serverId));
    if (!entry) return undefined;
    entry.left--;
    if (entry.left <= 0) this.#pending = this.#pending.filter((p) => p !== entry);
    return entry.fault;
  }

  get size(): number {
    return this.#pending.length;
  }
}
