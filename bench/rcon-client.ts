import { pino } from 'pino';
import { RconExecutor } from '../src/protocols/rcon/executor.js';
import { connectRawRcon } from './lib/raw-rcon.js';

/**
 * The client side of the RCON benchmark, run as its own process so that it does not share an
 * event loop with the fake server it talks to:
 *
 *   node dist/bench/rcon-client.js <porter|raw> <minecraft|source> <port> <durationMs>
 *
 * with the password in BENCH_RCON_PASSWORD (never on the command line). It sends one command after
 * another on one connection for `durationMs` (after a short warm-up) and prints
 * {"roundTrips": n, "ms": elapsed} on stdout.
 *
 * porter: porter's RconExecutor, exactly as the daemon uses it (for Minecraft that includes the
 * probe that proves the answer complete). raw: the least a client can do — write a command packet,
 * read packets until one carries the command's id — with no fragment handling at all.
 */

const COMMAND = 'say bench';
const WARMUP_MS = 300;

type Flavour = 'minecraft' | 'source';
type Send = () => Promise<unknown>;

async function rawSender(port: number, password: string): Promise<{ send: Send; close(): void }> {
  const { client, socket } = await connectRawRcon(port, password, 'raw RCON client');
  let id = 1;
  return {
    send: () => {
      const mine = ++id;
      return client.request(mine, 2, COMMAND, (answerId) => answerId === mine);
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

async function main(): Promise<void> {
  const [mode, flavour, portText, durationText] = process.argv.slice(2);
  const password = process.env.BENCH_RCON_PASSWORD;
  const port = Number(portText);
  const durationMs = Number(durationText);
  if (
    (mode !== 'porter' && mode !== 'raw') ||
    (flavour !== 'minecraft' && flavour !== 'source') ||
    !(port > 0) ||
    !(durationMs > 0) ||
    !password
  ) {
    process.stderr.write('usage: BENCH_RCON_PASSWORD=… node rcon-client.js <porter|raw> <minecraft|source> <port> <durationMs>\n');
    process.exit(2);
  }
  const client = mode === 'raw' ? await rawSender(port, password) : await porterSender(port, password, flavour);
  const warmUntil = performance.now() + WARMUP_MS;
  while (performance.now() < warmUntil) await client.send();
  let roundTrips = 0;
  const start = performance.now();
  const end = start + durationMs;
  while (performance.now() < end) {
    await client.send();
    roundTrips++;
  }
  const ms = performance.now() - start;
  client.close();
  process.stdout.write(`${JSON.stringify({ roundTrips, ms })}\n`);
}

await main();
