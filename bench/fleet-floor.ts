import { Agent, request } from 'node:http';
import { messageOf } from '../src/errors.js';
import { connectRawRcon, type RawRconClient } from './lib/raw-rcon.js';

/**
 * The floor of the fleet benchmark: the least a program must spend to make the calls porter made
 * in that run, with none of porter's decisions, journal or logging. Run as its own process, as
 * porter is, so that its CPU is its own:
 *
 *   BENCH_API_TOKEN=… BENCH_RCON_PASSWORD=… node dist/bench/fleet-floor.js \
 *     <apiUrl> <serverIdPrefix> <servers> <pullsPerSecond> <readsPerSecond> <apiConnections> <gamePort,…> [tick|per-server]
 *
 * It logs in once per server over RCON (round-robin over the game ports, as the benchmark's
 * config spreads them), prints "ready" on stdout, then until SIGTERM: pulls (an empty
 * onlineIdentifiers, as an empty server sends) at the given rate, over at most `apiConnections`
 * keep-alive connections, and reads the player list (`list`) at the given rate. Answers are read
 * and dropped.
 *
 * The schedule: `tick` (the default) sends everything due on one 20 ms interval, server after
 * server, so the calls leave and their answers come back in batches, the cheapest a program can
 * make them. `per-server` gives each server its own timer, as porter's loops have (a server's next
 * call is timed from its own last answer), with their phases spread at random over the period:
 * the same calls, woken for one by one.
 */

const TICK_MS = 20;

function serverId(prefix: string, i: number): string {
  return `${prefix}${i.toString(16).padStart(12, '0')}`;
}

type Pull = (id: string, answered?: () => void) => void;
type Read = (index: number, answered?: () => void) => void;

/** Everything due sent on one interval: calls leave, and answers come back, in batches. */
function onTick(prefix: string, servers: number, pullsPerSecond: number, readsPerSecond: number, pull: Pull, read: Read): { stop(): void } {
  const start = performance.now();
  let pulls = 0;
  let reads = 0;
  const timer = setInterval(() => {
    const seconds = (performance.now() - start) / 1000;
    for (; pulls < Math.floor(seconds * pullsPerSecond); pulls++) pull(serverId(prefix, (pulls % servers) + 1));
    for (; reads < Math.floor(seconds * readsPerSecond); reads++) read(reads % servers);
  }, TICK_MS);
  return { stop: () => clearInterval(timer) };
}

/** A timer per server and call, each next call timed from its own answer, phases spread at random. */
function perServer(
  prefix: string,
  servers: number,
  pullsPerSecond: number,
  readsPerSecond: number,
  pull: Pull,
  read: Read,
): { stop(): void } {
  let stopped = false;
  const every = (perSecond: number, call: (answered: () => void) => void) => {
    const periodMs = (servers / perSecond) * 1000;
    const next = () => {
      if (!stopped) setTimeout(() => call(next), periodMs);
    };
    setTimeout(() => call(next), Math.random() * periodMs);
  };
  for (let i = 0; i < servers; i++) {
    const id = serverId(prefix, i + 1);
    if (pullsPerSecond > 0) every(pullsPerSecond, (answered) => pull(id, answered));
    if (readsPerSecond > 0) every(readsPerSecond, (answered) => read(i, answered));
  }
  return { stop: () => (stopped = true) };
}

async function main(): Promise<void> {
  const [apiUrl, prefix, serversText, pullsText, readsText, connectionsText, portsText, schedule = 'tick'] = process.argv.slice(2);
  const token = process.env.BENCH_API_TOKEN;
  const password = process.env.BENCH_RCON_PASSWORD;
  const servers = Number(serversText);
  const pullsPerSecond = Number(pullsText);
  const readsPerSecond = Number(readsText);
  const connections = Number(connectionsText);
  const ports = (portsText ?? '').split(',').map(Number);
  if (
    !apiUrl ||
    !prefix ||
    !token ||
    !password ||
    !(servers > 0) ||
    !(pullsPerSecond >= 0) ||
    !(readsPerSecond >= 0) ||
    !(connections > 0) ||
    ports.some((p) => !(p > 0)) ||
    (schedule !== 'tick' && schedule !== 'per-server')
  ) {
    process.stderr.write(
      'usage: BENCH_API_TOKEN=… BENCH_RCON_PASSWORD=… node fleet-floor.js <apiUrl> <serverIdPrefix> <servers> <pullsPerSecond> <readsPerSecond> <apiConnections> <gamePort,…> [tick|per-server]\n',
    );
    process.exit(2);
  }

  const games: RawRconClient[] = [];
  for (let i = 0; i < servers; i++) games.push((await connectRawRcon(ports[i % ports.length]!, password, 'fleet floor')).client);

  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL(apiUrl);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const body = '{"onlineIdentifiers":[]}';
  const pull = (id: string, answered?: () => void) => {
    const req = request(
      { host: url.hostname, port: url.port, path: `/v1/seller/servers/${id}/commands/pull`, method: 'POST', agent, headers },
      (res) => res.resume(),
    );
    req.on('error', (error) => process.stderr.write(`fleet floor: pull: ${error.message}\n`));
    // 'close' follows the answer's end and a failed request alike (a keep-alive socket the server
    // closed as it was reused): on the per-server schedule that server's next pull waits on it.
    if (answered) req.once('close', answered);
    req.end(body);
  };
  // One read in flight per connection at most, as porter's executor has: a busy one is skipped.
  const busy = new Set<number>();
  let readId = 1;
  const read = (index: number, answered?: () => void) => {
    if (busy.has(index)) return;
    busy.add(index);
    const id = ++readId;
    void games[index]!.request(id, 2, 'list', (answer) => answer === id)
      .catch((error: unknown) => process.stderr.write(`fleet floor: read: ${messageOf(error)}\n`))
      .finally(() => {
        busy.delete(index);
        answered?.();
      });
  };

  process.stdout.write('ready\n');
  const timers = (schedule === 'tick' ? onTick : perServer)(prefix, servers, pullsPerSecond, readsPerSecond, pull, read);
  process.once('SIGTERM', () => {
    timers.stop();
    process.exit(0);
  });
}

await main();
