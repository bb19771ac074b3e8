/**
 * undici's Pool class by its own file. undici's index loads fetch, WebSocket, cookies, caches and
 * mocks with it, and porter's start-up paid for them all to reach the one class the Seller API
 * client uses (docs/benchmarks.md, start-up). undici has no "exports" map, so its files are
 * public to Node's resolver; the type is the index's own.
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';
  const PoolClass: typeof Pool;
  export default PoolClass;
}
