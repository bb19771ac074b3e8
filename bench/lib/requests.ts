import type { FakeSellerApi, SimRequest } from '../../src/sim/seller-api.js';

/**
 * Reads the fake API's request log incrementally (it only grows), so polling it during a run of
 * 50,000 commands stays cheap.
 */
export class RequestTally {
  readonly #api: FakeSellerApi;
  #index = 0;
  pulls = 0;
  claims = 0;
  emptyPulls = 0;
  doneOk = 0;
  tooMany = 0;
  firstPullAt: number | undefined;
  lastPullAt: number | undefined;
  readonly #listeners: Array<(request: SimRequest) => void> = [];

  constructor(api: FakeSellerApi) {
    this.#api = api;
  }

  /** Called for every request seen by `update()` from now on. */
  onRequest(listener: (request: SimRequest) => void): void {
    this.#listeners.push(listener);
  }

  update(): this {
    const requests = this.#api.requests;
    for (; this.#index < requests.length; this.#index++) {
      const request = requests[this.#index]!;
      if (request.status === 429) this.tooMany++;
      if (request.route === 'pull') {
        this.pulls++;
        this.firstPullAt ??= request.at;
        this.lastPullAt = request.at;
        if (request.status === 200) this.claims++;
        else if (request.status === 204) this.emptyPulls++;
      } else if (request.route === 'done' && request.status === 200) {
        this.doneOk++;
      }
      for (const listener of this.#listeners) listener(request);
    }
    return this;
  }
}
