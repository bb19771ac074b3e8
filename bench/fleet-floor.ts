import { Agent, request } from 'node:http';
import { connectRawRcon, type RawRconClient } from './lib/raw-rcon.js';

/**
 * The floor of the fleet benchmark: the least a program must spend to make the calls porter made
 * in that run, with none of porter's decisions, journal or logging. Run as its own process, as
 * porter is, so that its CPU is its own:
 *
 *   BENCH_API_TOKEN=… BENCH_RCON_PASSWORD=… node dist/bench/fleet-floor.js \
 *     <apiUrl> <serverIdPrefix> <servers> <pullsPerSecond> <readsPerSecond> <apiConnections> <gamePort,…>
 *
 * It logs in once per server over RCON (round-robin over the game ports, as the benchmark's
 * config spreads them), prints "ready" on stdout, then until SIGTERM: pulls (an empty
 * onlineIdentifiers, as an empty server sends) at the given rate, server after server, over at most
 * `apiConnections` keep-alive connections, and reads the player list (`list`) at the given rate,
 * connection after connection. Answers are read and dropped.
 */

const TICK_MS = 20;

function serverId(prefix: string, i: number): string {
  return `${prefix}${i.toString(16).padStart(12, '0')}`;
}

async function main(): Promise<void> {
  const [apiUrl, prefix, serversText, pullsText, readsText, connectionsText, portsText] = process.argv.slice(2);
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
    ports.some((p) => !(p > 0))
  ) {
    process.stderr.write(
      'usage: BENCH_API_TOKEN=… BENCH_RCON_PASSWORD=… node fleet-floor.js <apiUrl> <serverIdPrefix> <servers> <pullsPerSecond> <readsPerSecond> <apiConnections> <gamePort,…>\n',
    );
    process.exit(2);
  }

  const games: RawRconClient[] = [];
  for (let i = 0; i < servers; i++) games.push((await connectRawRcon(ports[i % ports.length]!, password, 'fleet floor')).client);

  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL(apiUrl);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const body = '{"onlineIdentifiers":[]}';
  const pull = (id: string) => {
    const req = request(
      { host: url.hostname, port: url.port, path: `/v1/seller/servers/${id}/commands/pull`, method: 'POST', agent, headers },
      (res) => res.resume(),
    );
    req.on('error', (error) => process.stderr.write(`fleet floor: pull: ${error.message}\n`));
    req.end(body);
  };
  // One read in flight per connection at most, as porter's executor has: a busy one is skipped.
  const busy = new Set<number>();
  let readId = 1;
  const read = (index: number) => {
    if (busy.has(index)) return;
    busy.add(index);
    const id = ++readId;
    void games[index]!.request(id, 2, 'list', (answer) => answer === id).then(() => busy.delete(index));
  };

  process.stdout.write('ready\n');
  const start = performance.now();
  let pulls = 0;
  let reads = 0;
  const timer = setInterval(() => {
    const seconds = (performance.now() - start) / 1000;
    for (; pulls < Math.floor(seconds * pullsPerSecond); pulls++) pull(serverId(prefix, (pulls % servers) + 1));
    for (; reads < Math.floor(seconds * readsPerSecond); reads++) read(reads % servers);
  }, TICK_MS);
  process.once('SIGTERM', () => {
    clearInterval(timer);
    process.exit(0);
  });
}

await main();
