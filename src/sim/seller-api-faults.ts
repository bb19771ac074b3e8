/** Faults the simulated Seller API can play on the next requests of a route (tests, bench, demo). */
export type SimRoute = 'pull' | 'done' | 'fail' | 'servers';

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
  /** Answer with this raw body (default status 200, application/json); nothing is claimed or settled. */
  | { readonly body: string; readonly status?: number; readonly contentType?: string };

interface Pending {
  readonly route: SimRoute;
  readonly serverId: string | undefined;
  readonly fault: Fault;
  left: number;
}

export function describeFault(fault: Fault): string {
  if (typeof fault === 'string') return fault;
  return 'delay' in fault ? `delay ${fault.delay} ms` : `body (${fault.status ?? 200})`;
}

export class FaultPlan {
  #pending: Pending[] = [];

  add(route: SimRoute, fault: Fault, options: { times?: number; serverId?: string } = {}): void {
    this.#pending.push({ route, serverId: options.serverId, fault, left: options.times ?? 1 });
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
