import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { connectRawRcon } from './lib/raw-rcon.js';

/**
 * The floor of CPU per command: the least a program must spend to deliver one command, with none
 * of porter's decisions, journal or logging. Run as its own process, as porter is:
 *
 *   BENCH_API_TOKEN=… BENCH_RCON_PASSWORD=… node dist/bench/command-floor.js <apiUrl> <serverId> <gamePort> <commands|-> [journal]
 *
 * One keep-alive API connection and one RCON login; then, one after another: pull, run the
 * claimed command over RCON (one packet out, the first packet with its id back), report it done.
 * With a journal file, the durable floor: also the least the never-twice promise costs, a line
 * written and fdatasync'd before the command runs (the claim) and one after (its outcome), as
 * porter's journal does (docs/design.md#delivery-semantics).
 * It prints {"commands": n, "cpuMs": …} (its own user + system CPU over the loop) and exits.
 *
 * With `-` for the count it runs in slices instead, warm from one slice to the next as porter is
 * from one segment to the next: each line on stdin is a count, delivered and answered with one
 * such line on stdout; it exits when stdin ends.
 */

function post(
  agent: Agent,
  url: URL,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const [apiUrl, serverId, portText, commandsText, journalPath] = process.argv.slice(2);
  const token = process.env.BENCH_API_TOKEN;
  const password = process.env.BENCH_RCON_PASSWORD;
  const port = Number(portText);
  const sliced = commandsText === '-';
  const commands = Number(commandsText);
  if (!apiUrl || !serverId || !token || !password || !(port > 0) || !(sliced || commands > 0)) {
    process.stderr.write(
      'usage: BENCH_API_TOKEN=… BENCH_RCON_PASSWORD=… node command-floor.js <apiUrl> <serverId> <gamePort> <commands|-> [journal]\n',
    );
    process.exit(2);
  }
  const { client: game, socket } = await connectRawRcon(port, password, 'command floor');

  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(apiUrl);
  const auth = { authorization: `Bearer ${token}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const base = `/v1/seller/servers/${serverId}/commands`;
  const journal = journalPath === undefined ? undefined : openSync(journalPath, 'a', 0o600);
  const durably = (line: string) => {
    if (journal === undefined) return;
    writeSync(journal, line);
    fdatasyncSync(journal);
  };
  let rconId = 1;
  /** Delivers `commands` one after another; its CPU over them, in ms. */
  const deliver = async (commands: number): Promise<number> => {
    const cpu0 = process.cpuUsage();
    let delivered = 0;
    while (delivered < commands) {
      const pulled = await post(agent, url, `${base}/pull`, json, '{"onlineIdentifiers":[]}');
      if (pulled.status === 204) continue;
      if (pulled.status !== 200) throw new Error(`pull answered ${pulled.status}: ${pulled.text}`);
      const { id, command } = JSON.parse(pulled.text) as { id: number | string; command: string };
      durably(`{"claim":${JSON.stringify(String(id))}}\n`);
      const mine = ++rconId;
      await game.request(mine, 2, command, (answer) => answer === mine);
      durably(`{"done":${JSON.stringify(String(id))}}\n`);
      const reported = await post(agent, url, `${base}/${String(id)}/done`, auth, undefined);
      if (reported.status !== 200) throw new Error(`done answered ${reported.status}: ${reported.text}`);
      delivered++;
    }
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / 1000;
  };
  const answer = (delivered: number, cpuMs: number) => process.stdout.write(`${JSON.stringify({ commands: delivered, cpuMs })}\n`);
  if (sliced) {
    for await (const line of createInterface({ input: process.stdin })) {
      const count = Number(line);
      if (!(count > 0)) throw new Error(`a slice is a count of commands, not ${JSON.stringify(line)}`);
      answer(count, await deliver(count));
    }
  } else answer(commands, await deliver(commands));
  socket.destroy();
  agent.destroy();
  if (journal !== undefined) closeSync(journal);
}

await main();
