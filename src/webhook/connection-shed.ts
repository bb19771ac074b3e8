import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The webhook listener's connection cap, kept by shedding instead of refusing
 * (docs/design.md#webhook-wake-ups). Node's `maxConnections` drops whatever connection comes
 * after the cap: under a flood of idle or slowloris connections (all from one address, as behind
 * a reverse proxy) the store's own event is the one dropped. Here every connection is accepted,
 * and once there are more than the cap the one that has sent the least goes:
 *
 * 1. one that has not sent a whole request yet and is not sending one (idle since it connected,
 *    or trickling its headers), oldest first;
 * 2. one still sending a request's body, oldest first;
 * 3. an idle keep-alive connection, whose requests were answered, oldest first.
 *
 * The newcomer is never the one shed while another can go, and a connection whose whole request
 * arrived and is being answered never is; when every other one is being answered, the newcomer
 * goes. So a flood delays the store's event by no more than it takes to send it: its connection
 * is the newest, the last of its kind to be shed, and once its body is in it is safe.
 */

interface Tracked {
  readonly socket: Socket;
  /** Arrival order. */
  readonly order: number;
  /** Requests whose body arrived in full. */
  received: number;
  /** A request is open: its headers arrived and its answer is not finished. */
  open: boolean;
  /** The open request's body arrived in full. */
  bodyIn: boolean;
}

/** How much a connection has sent, lowest shed first; undefined: never shed. */
function rank(tracked: Tracked): number | undefined {
  if (!tracked.open) return tracked.received === 0 ? 0 : 2;
  return tracked.bodyIn ? undefined : 1;
}

/**
 * The peer's address and port: what identifies a connection both as the raw socket of the
 * 'connection' event and as the TLS socket a request of an HTTPS server carries.
 */
function peerOf(socket: Socket): string | undefined {
  const { remoteAddress, remotePort } = socket;
  return remoteAddress === undefined || remotePort === undefined ? undefined : `${remoteAddress}|${remotePort}`;
}

export function shedAtCap(server: Server, cap: number, onShed: () => void = () => {}): void {
  const tracked = new Map<string, Tracked>();
  let arrivals = 0;

  server.on('connection', (socket: Socket) => {
    const peer = peerOf(socket);
    if (peer === undefined) {
      socket.destroy();
      return;
    }
    const entry: Tracked = { socket, order: arrivals++, received: 0, open: false, bodyIn: false };
    tracked.set(peer, entry);
    socket.once('close', () => {
      if (tracked.get(peer) === entry) tracked.delete(peer);
    });
    if (tracked.size > cap) {
      // Never the newcomer while another can go: it has sent nothing yet only because it just came.
      const victim = leastSent(tracked.values(), entry) ?? entry;
      onShed();
      victim.socket.destroy();
    }
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const peer = peerOf(request.socket);
    const entry = peer === undefined ? undefined : tracked.get(peer);
    if (!entry) return;
    entry.open = true;
    entry.bodyIn = false;
    request.once('end', () => {
      entry.bodyIn = true;
      entry.received++;
    });
    response.once('close', () => {
      entry.open = false;
    });
  });
}

function leastSent(connections: Iterable<Tracked>, newcomer: Tracked): Tracked | undefined {
  let best: Tracked | undefined;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const connection of connections) {
    if (connection === newcomer) continue;
    const r = rank(connection);
    if (r === undefined) continue;
    if (r < bestRank || (r === bestRank && connection.order < best!.order)) {
      best = connection;
      bestRank = r;
    }
  }
  return best;
}
