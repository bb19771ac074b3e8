import type { ServerSummary } from '../api/answers/token-check.js';
import { ConfigError } from '../errors.js';
import type { Prompter } from './prompter.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const uuidProblem = (value: string) =>
  UUID.test(value.trim()) ? undefined : 'expected the server id from the store dashboard (Servers): 8-4-4-4-12 hex digits';

/**
 * Which of the store's servers this game server is: picked from the list when the token can read
 * it, else typed in (and the owner told which scope would have listed them).
 */
export async function pickStoreServer(
  prompter: Prompter,
  given: string | undefined,
  servers: readonly ServerSummary[] | undefined,
  acceptOnly: boolean,
): Promise<ServerSummary> {
  if (given !== undefined) {
    const problem = uuidProblem(given);
    if (problem !== undefined) throw new ConfigError(`--server-id ${given}: ${problem}`);
    if (servers === undefined) return { id: given, name: undefined, type: undefined, rcon: undefined };
    const known = servers.find((server) => server.id.toLowerCase() === given.toLowerCase());
    if (!known) {
      throw new ConfigError(
        `--server-id ${given} is not one of this store's servers (${servers.map((s) => `${s.name ?? '?'} ${s.id}`).join(', ') || 'it has none'}): check the id in the store dashboard (Servers)`,
      );
    }
    return known;
  }
  if (servers === undefined) {
    prompter.say(
      'info',
      "this token cannot list the store's servers: a token with the servers:read scope would have listed them to pick from",
    );
    const id = await prompter.text({
      message: 'Server id (store dashboard, Servers)',
      flag: '--server-id',
      env: 'PORTER_SERVER_ID',
      validate: uuidProblem,
    });
    return { id, name: undefined, type: undefined, rcon: undefined };
  }
  if (servers.length === 0) {
    throw new ConfigError(
      'the store has no servers yet: add this game server in the store dashboard (Servers), then run porter init again',
    );
  }
  if (servers.length === 1 && acceptOnly) {
    prompter.say('ok', `store server ${describe(servers[0]!)}`);
    return servers[0]!;
  }
  return prompter.select({
    message: "Which of the store's servers is this game server?",
    flag: '--server-id',
    env: 'PORTER_SERVER_ID',
    choices: servers.map((server) => ({ value: server, label: server.name ?? server.id, hint: hint(server) })),
  });
}

function hint(server: ServerSummary): string {
  return [server.type, server.rcon ? `${server.rcon.host}:${server.rcon.port}` : undefined, server.id].filter(Boolean).join(' · ');
}

function describe(server: ServerSummary): string {
  return `${server.name ?? server.id} (${hint(server)})`;
}
