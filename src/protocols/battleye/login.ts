import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { startDeadline, type Clock } from '../../clock.js';
import { CredentialsError } from '../../errors.js';
import { BattlEyeConnectError } from './errors.js';
import { decodeServerPacket, encodeLogin } from './packet.js';
import type { BattlEyeTraffic } from './traffic.js';

export interface LoginOptions {
  readonly host: string;
  readonly port: number;
  readonly password: string;
  readonly connectTimeoutMs: number;
  readonly clock: Clock;
  readonly traffic: BattlEyeTraffic;
}

/** Where the settings live, for every message that sends the operator there. */
const SETTINGS_HINT = 'RConPassword and RConPort in BEServer_x64.cfg (beserver_x64.cfg on Linux)';

/**
 * A UDP socket connected to the server, with the login accepted. BattlEye answers a login only
 * when RCon is enabled (RConPassword set), so silence is "not enabled or wrong port", never a
 * password problem; `0x00 0x00` is a rejected password. Each attempt is a new socket, which the
 * server sees as a new client: nothing of an earlier login (its answers, its sequence numbers)
 * can reach it.
 */
export function loginOverUdp(options: LoginOptions, signal?: AbortSignal): Promise<Socket> {
  const { host, port, clock, traffic } = options;
  const where = `BattlEye RCon at ${host}:${port} (UDP)`;
  return new Promise<Socket>((resolve, reject) => {
    const socket = createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4' });
    let settled = false;
    let cancelDeadline = () => {};
    const finish = () => {
      settled = true;
      cancelDeadline();
      signal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners('message');
      socket.removeAllListeners('error');
    };
    const fail = (error: Error) => {
      if (settled) return;
      finish();
      try {
        socket.close();
      } catch {
        // already closed
      }
      reject(error);
    };
    const onAbort = () => fail(new BattlEyeConnectError(`logging in to ${where} was cancelled`));
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.on('error', (error: NodeJS.ErrnoException) => fail(unreachable(where, error)));
    socket.on('message', (datagram: Buffer) => {
      const decoded = decodeServerPacket(datagram);
      if ('problem' in decoded) {
        traffic.dropped += 1;
        return;
      }
      // Anything else before the login answer belongs to nobody yet.
      if (decoded.packet.kind !== 'login') return;
      if (!decoded.packet.accepted) {
        fail(
          new CredentialsError(
            `${where} rejected the password: set servers[].executor.password (or passwordFile, or PORTER_RCON_PASSWORD) ` +
              `to RConPassword from BEServer_x64.cfg (beserver_x64.cfg on Linux)`,
          ),
        );
        return;
      }
      // A server message that comes before the connection listens is not lost: BattlEye sends it
      // again until it is acknowledged.
      finish();
      resolve(socket);
    });
    cancelDeadline = startDeadline(clock, options.connectTimeoutMs, () =>
      fail(
        new BattlEyeConnectError(
          `${where} did not answer the login within ${options.connectTimeoutMs} ms (servers[].executor.connectTimeoutMs). ` +
            `BattlEye answers only when RCon is enabled: check ${SETTINGS_HINT}, that the game server is running, ` +
            'and that this UDP port is reachable',
        ),
      ),
    );
    socket.connect(port, host, (error?: Error) => {
      if (error) {
        fail(unreachable(where, error));
        return;
      }
      if (settled) return;
      socket.send(encodeLogin(options.password), (sendError) => {
        if (sendError) fail(unreachable(where, sendError));
      });
    });
  });
}

function unreachable(where: string, error: NodeJS.ErrnoException): BattlEyeConnectError {
  const code = error.code ?? error.name;
  if (code === 'ECONNREFUSED') {
    return new BattlEyeConnectError(
      `nothing listens at ${where} (ECONNREFUSED): is the game server running, and is this its RConPort? Check ${SETTINGS_HINT}`,
    );
  }
  return new BattlEyeConnectError(`${where} could not be reached (${code}): check the host and ${SETTINGS_HINT}`);
}
