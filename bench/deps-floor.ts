import { Command } from 'commander';
import { pino } from 'pino';
// As porter loads it (src/net/undici-pool.d.ts): undici's Pool by its own file, not the whole index.
import Pool from 'undici/lib/dispatcher/pool.js';
import { z } from 'zod';

/**
 * The memory floor of porter's mandated dependencies: a process that loads commander,
 * pino, undici and zod (bundled the way porter is), uses each once, and idles. Its RSS
 * shows how much of porter's own RSS is the libraries rather than porter. Run by the cpu-memory
 * benchmark: `node deps-floor.bundle.js <api url>`; prints nothing, the harness reads /proc.
 */

const url = process.argv[2];
if (!url) throw new Error('usage: deps-floor <http url to send one request to>');
const pool = new Pool(new URL(url).origin);
// Dispatched with a handler of its own, as porter's client does (a Pool loaded by its file has no request()).
await new Promise<void>((resolve, reject) =>
  pool.dispatch(
    { path: '/', method: 'GET' },
    {
      onRequestStart: () => undefined,
      onResponseStart: () => undefined,
      onResponseData: () => undefined,
      onResponseEnd: () => resolve(),
      onResponseError: (_controller, error) => reject(error),
    },
  ),
);
pino({ base: undefined }, pino.destination({ dest: 1, sync: true })).info('deps floor');
z.object({ loaded: z.boolean() }).parse({ loaded: true });
new Command('floor').parse([], { from: 'user' });
setInterval(() => {}, 1000);
