import { resolveExecutable } from '../protocols/transport-descriptor.js';
import { resolveExecutor, transportOf } from '../protocols/transport-registry.js';
import { playersSchema } from './schema.js';
import type { PlayersConfig, ResolvedServer, ServerConfig } from './schema.js';

const playersDefaults: PlayersConfig = playersSchema.parse({});

/**
 * Fills the preset (the transport's default when not given), the executor (resolved by its
 * transport's descriptor) and the paths of one parsed server; `password` was resolved by the caller.
 */
export function resolveServer(server: ServerConfig, baseDir: string, password: string | undefined): ResolvedServer {
  const players = server.players ?? playersDefaults;
  const preset = players.preset ?? transportOf(server.executor.type).defaultPreset;
  const { preset: _preset, exec: playersExec, ...playersRest } = players;
  const resolvedPlayers: ResolvedServer['players'] = {
    ...playersRest,
    ...(playersExec !== undefined && { exec: resolveExecutable(playersExec, baseDir) }),
    preset,
  };
  return { ...server, executor: resolveExecutor(server.executor, { preset, baseDir, password }), players: resolvedPlayers };
}
