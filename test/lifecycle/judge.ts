import type { SimRequest } from '../../src/sim/seller-api.js';
import { owed, STOP_SLACK_MS, type Life, type Played } from './play.js';

/**
 * The promise, judged after a run (README, "What porter promises"): nothing run twice, every claim
 * reported while its store is configured, no pull while a gate is shut, every route within its
 * budget, every stop within its bound and exit 0, no secret printed, the store's webhook events
 * never refused, and no call timed out that the API answered at once. Each verdict names what
 * broke, with enough to find it in the run's log.
 */

/**
 * How long after a gate shut a pull may still arrive: porter learns of the change over a socket,
 * and a pull it already sent is in flight. Wide, because a loaded CI machine is slow (its event
 * loop lags by a few hundred ms); a pull decided before a wait that the gate shut during comes
 * whole seconds later.
 */
const GATE_GRACE_MS = 1_000;
/** A call the API delayed at least this much below porter's deadline may have timed out honestly. */
const DELAY_MARGIN_MS = 1_000;
/** The store waits 10 s for a webhook answer; a flood may delay it by about a second, not by several. */
const WEBHOOK_ANSWER_BOUND_MS = 5_000;

export function judge(played: Played): string[] {
  return [
    ...neverTwice(played),
    ...neverLost(played),
    ...gates(played),
    ...budgets(played),
    ...stops(played),
    ...secrets(played),
    ...webhooks(played),
    ...timeouts(played),
  ];
}

function neverTwice({ world, purchases }: Played): string[] {
  const verdicts: string[] = [];
  const runs = new Map<string, number>();
  for (const game of world.games) {
    for (const ran of game.executed) {
      const text = /lc\d+-\d+$/.exec(ran.command)?.[0];
      if (text !== undefined && !ran.query) runs.set(text, (runs.get(text) ?? 0) + 1);
    }
  }
  for (const purchase of purchases) {
    const count = runs.get(purchase.text) ?? 0;
    if (count > 1) verdicts.push(`never twice: ${purchase.text} ran ${count} times`);
  }
  for (const origin of world.origins) {
    for (const command of origin.commands())
      if (command.claims > 1) verdicts.push(`never twice: command ${command.id} was claimed ${command.claims} times`);
  }
  return verdicts;
}

function neverLost({ world }: Played): string[] {
  return owed(world).map(
    (c) =>
      `never lost: command ${c.id} (${String(c.command)}) of server ${c.serverId} is still PROCESSING after the settle run, while ${
        world.servers.some((s) => s.id === c.serverId) ? 'its server' : 'its store'
      } is configured`,
  );
}

/** No pull arrives while the GameServer is not Ready, the game server is down, or porter is stopping. */
function gates({ world, closures }: Played): string[] {
  const verdicts: string[] = [];
  for (const origin of world.origins) {
    for (const request of origin.requests) {
      if (request.route !== 'pull' || request.serverId === undefined) continue;
      const shut = closures.find((c) => c.servers(request.serverId!) && request.at >= c.from + GATE_GRACE_MS && request.at < c.to);
      if (shut) {
        verdicts.push(
          `no pull outside an open gate: server ${nameOf(world, request.serverId)} pulled ${request.at - shut.from} ms into "${shut.why}"`,
        );
      }
    }
  }
  return verdicts;
}

/** Per porter process: in any rolling window, at most perWindow calls to a route of a server. */
function budgets({ world, lives }: Played): string[] {
  const { perWindow, windowMs } = world.shape.budget;
  const verdicts: string[] = [];
  for (const life of lives) {
    const end = life.exitAt ?? Number.POSITIVE_INFINITY;
    for (const origin of world.origins) {
      const byRoute = new Map<string, number[]>();
      for (const request of origin.requests) {
        if (request.serverId === undefined || request.route === 'unknown' || request.at < life.spawnedAt || request.at > end) continue;
        const key = `${request.serverId} ${request.route}`;
        byRoute.set(key, [...(byRoute.get(key) ?? []), request.at]);
      }
      for (const [key, unsorted] of byRoute) {
        // Recorded as answered, not as arrived: a call the API held is recorded late.
        const times = unsorted.sort((a, b) => a - b);
        for (let i = perWindow; i < times.length; i++) {
          if (times[i]! - times[i - perWindow]! < windowMs) {
            verdicts.push(
              `never over budget: ${perWindow + 1} calls to ${key} within ${times[i]! - times[i - perWindow]!} ms (window ${windowMs} ms)`,
            );
            break;
          }
        }
      }
    }
  }
  return verdicts;
}

function stops({ world, lives }: Played): string[] {
  const bound = world.shape.drainMs + STOP_SLACK_MS;
  return lives.flatMap((life, i) => {
    const which = `porter #${i + 1}${life.final ? ' (settle run)' : ''}`;
    if (life.stopAt === undefined) {
      return life.exit === undefined
        ? []
        : [`${which} exited on its own (${JSON.stringify(life.exit)}) at ${life.exitAt! - life.spawnedAt} ms\n${life.porter.tail(8)}`];
    }
    const took = life.exitAt! - life.stopAt;
    const verdicts: string[] = [];
    if (life.overstayed || took > bound) {
      verdicts.push(
        `stop within its bound: ${which} took ${life.overstayed ? 'more than ' : ''}${took} ms to exit after SIGTERM at ${life.stopAt - life.spawnedAt} ms of its life (bound ${bound} ms)`,
      );
    } else if (!cleanExit(life)) {
      verdicts.push(
        `stop with exit 0: ${which} exited ${JSON.stringify(life.exit)} after SIGTERM at ${life.stopAt - life.spawnedAt} ms\n${life.porter.tail(8)}`,
      );
    }
    return verdicts;
  });
}

/** Exit 0; or killed by the SIGTERM itself before porter's code ran at all (node was still loading it). */
function cleanExit(life: Life): boolean {
  if (life.exit?.code === 0) return true;
  return life.exit?.signal === 'SIGTERM' && life.porter.stdout === '' && life.porter.stderr === '';
}

/** The secret, and of a long one (a seed with huge secrets) 32-character pieces of it: a leaked half is a leak too. */
function piecesOf(secret: string): string[] {
  if (secret.length <= 64) return [secret];
  return Array.from({ length: Math.floor((secret.length - 32) / 256) + 1 }, (_, n) => secret.slice(n * 256, n * 256 + 32));
}

function secrets({ world, lives }: Played): string[] {
  const verdicts: string[] = [];
  for (const secret of world.secrets()) {
    const life = lives.findIndex((l) => piecesOf(secret).some((piece) => l.porter.output.includes(piece)));
    if (life >= 0) verdicts.push(`no secret leaves: porter #${life + 1} printed a secret starting ${secret.slice(0, 8)}…`);
  }
  return verdicts;
}

/** Every signed event sent to a listener that said it was ready, while porter was not stopping, answered 2xx promptly. */
function webhooks({ webhooks: sent }: Played): string[] {
  return sent
    .filter((event) => event.life.stopAt === undefined || event.answeredAt < event.life.stopAt)
    .filter((event) => event.status < 200 || event.status > 299 || event.answeredAt - event.sentAt > WEBHOOK_ANSWER_BOUND_MS)
    .map(
      (event) =>
        `webhook events never refused: a signed event for store ${event.store}${event.flood ? ' during a flood' : ''} got ${event.status || event.error} after ${event.answeredAt - event.sentAt} ms`,
    );
}

/**
 * A call porter says got no answer in time must be one the API really held: the Seller API answers
 * at once unless a fault delayed it. A timeout with no delayed call to match is porter's own
 * queue (or a deadline that counted before the request was sent).
 */
function timeouts({ world, lives }: Played): string[] {
  const timeoutMs = world.shape.apiTimeoutMs;
  const held = new Map<string, number>();
  for (const origin of world.origins) {
    for (const request of origin.requests)
      if (request.serverId !== undefined && wasHeld(request, timeoutMs)) held.set(request.serverId, (held.get(request.serverId) ?? 0) + 1);
  }
  const said = new Map<string, number>();
  for (const life of lives) {
    for (const line of life.porter.lines) {
      const err = typeof line.err === 'string' ? line.err : '';
      const server = /no answer within \d+ ms \(api\.timeoutMs\)/.test(err) ? /for server ([0-9a-f-]{36})/.exec(err)?.[1] : undefined;
      if (server !== undefined) said.set(server, (said.get(server) ?? 0) + 1);
    }
  }
  return [...said]
    .filter(([server, count]) => count > (held.get(server) ?? 0))
    .map(
      ([server, count]) =>
        `a deadline counts from the send: porter timed out ${count} calls of server ${nameOf(world, server)}, the API held ${held.get(server) ?? 0}`,
    );
}

function wasHeld(request: SimRequest, timeoutMs: number): boolean {
  if (request.status === 0) return true;
  const delay = /^delay (\d+) ms$/.exec(request.fault ?? '')?.[1];
  return delay !== undefined && Number(delay) >= timeoutMs - DELAY_MARGIN_MS;
}

function nameOf(world: Played['world'], serverId: string): string {
  const name = world.servers.find((s) => s.id === serverId)?.name;
  return name === undefined ? serverId : `${name} (${serverId})`;
}
