/**
 * undici's Pool class by its own file. undici's index loads fetch, WebSocket, cookies, caches and
 * mocks with it, and porter's start-up paid for them all to reach the one class the Seller API
 * client uses (docs/benchmarks.md, start-up). undici has no "exports" map, so its files are
 * public to Node's resolver. The index also adds request(), stream(), pipeline(), connect() and
 * upgrade() to every dispatcher; a Pool loaded this way has none of them, so the type leaves them
 * out: porter dispatches its own handler (src/net/http-exchange.ts) and closes.
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';
  export type BarePool = Omit<Pool, 'request' | 'stream' | 'pipeline' | 'connect' | 'upgrade'>;
  const PoolClass: new (url: string | URL, options?: Pool.Options) => BarePool;
  export default PoolClass;
}
