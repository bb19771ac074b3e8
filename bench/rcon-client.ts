import { pino } from 'pino';
import { RconExecutor } from '../src/protocols/rcon/executor.js';
import { connectRawRcon } from './lib/raw-rcon.js';

/**
 * The client side of the RCON benchmark, run as its own process so that it does not share an
 * event loop with the fake server it talks to:
 *
 *   node dist/bench/rcon-client.js <minecraft|source> <port> <durationMs>
 *
 * with the password in BENCH_RCON_PASSWORD (never on the command line). Two clients, each on a
 * connection of its own, send one command after another, taking turns in short slices for
 * `durationMs` each (after a short warm-up), and it prints
 * {"porter": {"roundTrips": n, "ms": elapsed}, "raw": {…}} on stdout.
 *
 * porter: porter's RconExecutor, exactly as the daemon uses it. raw: the least a client can do for
 * a whole answer — write the packets the protocol needs, read packets until the one that ends the
 * answer — with no fragment handling, no deadline and no decisions.
 */

const COMMAND = 'say bench';
const WARMUP_MS = 300;
const SLICES = 20;

type Flavour = 'minecraft' | 'source';
type Send = () => Promise<unknown>;

async function rawSender(port: number, password: string, flavour: Flavour): Promise<{ send: Send; close(): void }> {
  const { client, socket } = await connectRawRcon(port, password, 'raw RCON client');
  let id = 1;
  // The same packets the protocol needs for a whole answer, and nothing else: Minecraft's short
  // answer is whole in one packet; a Source server's answer ends only where the mirror of an empty
  // RESPONSE_VALUE sent after the command comes back (src/protocols/rcon/exchange.ts). Without the
  // probe the raw loop would measure half the protocol, and the ratio the protocol, not porter.
  return {
    send: () => {
      const mine = ++id;
      if (flavour === 'minecraft') return client.request(mine, 2, COMMAND, (answerId) => answerId === mine);
      const probe = ++id;
      return client.requestAll(
        [
          { id: mine, type: 2, body: COMMAND },
          { id: probe, type: 0, body: '' },
        ],
        (answerId) => answerId === probe,
      );
    },
    close: () => socket.destroy(),
  };
}

async function porterSender(port: number, password: string, flavour: Flavour): Promise<{ send: Send; close(): void }> {
  const executor = new RconExecutor(
    { type: 'rcon', host: '127.0.0.1', port, password, flavour, timeoutMs: 5000, connectTimeoutMs: 5000, maxRequestBytes: 1446 },
    { logger: pino({ level: 'silent' }) },
  );
  await executor.connect();
  const context = { id: '1', serverId: 'bench' };
  return { send: () => executor.execute(COMMAND, context), close: () => void executor.close() };
}

/** Round trips in `ms` of sending one command after another. */
async function slice(client: { send: Send }, ms: number): Promise<{ roundTrips: number; ms: number }> {
  let roundTrips = 0;
  const start = performance.now();
  const end = start + ms;
  while (performance.now() < end) {
    await client.send();
    roundTrips++;
  }
  return { roundTrips, ms: performance.now() - start };
}

async function main(): Promise<void> {
  const [flavour, portText, durationText] = process.argv.slice(2);
  const password = process.env.BENCH_RCON_PASSWORD;
  const port = Number(portText);
  const durationMs = Number(durationText);
  if ((flavour !== 'minecraft' && flavour !== 'source') || !(port > 0) || !(durationMs > 0) || !password) {
    process.stderr.write('usage: BENCH_RCON_PASSWORD=… node rcon-client.js <minecraft|source> <port> <durationMs>\n');
    process.exit(2);
  }
  const clients = { porter: await porterSender(port, password, flavour), raw: await rawSender(port, password, flavour) };
  for (const client of Object.values(clients)) {
    const warmUntil = performance.now() + WARMUP_MS;
    while (performance.now() < warmUntil) await client.send();
  }
  // Short slices, alternating, in one process: a shared machine's load moves from one second to
  // the next, and each slice of one client has a slice of the other beside it in the same moment.
  const totals = { porter: { roundTrips: 0, ms: 0 }, raw: { roundTrips: 0, ms: 0 } };
  for (let i = 0; i < SLICES; i++) {
    const order = i % 2 === 0 ? (['porter', 'raw'] as const) : (['raw', 'porter'] as const);
    for (const name of order) {
      const done = await slice(clients[name], durationMs / SLICES);
      totals[name].roundTrips += done.roundTrips;
      totals[name].ms += done.ms;
    }
  }
  clients.porter.close();
  clients.raw.close();
  process.stdout.write(`${JSON.stringify(totals)}\n`);
}

await main();
