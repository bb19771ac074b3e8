import { ConfigError } from '../errors.js';

/**
 * What porter makes of an Agones GameServer's state (docs/design.md#agones). The states are
 * Agones' own (agones.dev/v1 GameServer status.state: PortAllocation, Creating, Starting,
 * Scheduled, RequestReady, Ready, Reserved, Allocated, Unhealthy, Shutdown, Error).
 */
export type GateDecision = 'claim' | 'hold' | 'shutdown';

/** Claims only while players can be on the server: Ready, Reserved or Allocated. */
export function decisionFor(state: string | undefined): GateDecision {
  switch (state) {
    case 'Ready':
    case 'Reserved':
    case 'Allocated':
      return 'claim';
    case 'Shutdown':
      return 'shutdown';
    default:
      return 'hold';
  }
}

/**
 * The SDK gateway's port: `agones.sdkHttpPort`, else AGONES_SDK_HTTP_PORT (Agones sets it in every
 * container of a GameServer pod), else undefined: porter is not inside a GameServer.
 */
export function agonesPortFrom(configured: number | undefined, env: NodeJS.ProcessEnv): number | undefined {
  if (configured !== undefined) return configured;
  const text = env.AGONES_SDK_HTTP_PORT;
  if (text === undefined || text.trim() === '') return undefined;
  const port = /^\s*\d{1,5}\s*$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw new ConfigError(
      `AGONES_SDK_HTTP_PORT is "${text}", not a port: Agones sets it to the SDK's HTTP port; unset it outside a GameServer, or set agones.sdkHttpPort`,
    );
  }
  return port;
}
