import { isAbsolute, resolve } from 'node:path';
import { playersSchema, presetNames } from './schema.js';
import type { ExecutorConfig, PlayersConfig, ResolvedExecutor, ResolvedServer, ServerConfig } from './schema.js';

export type PresetName = (typeof presetNames)[number];
export type RconFlavour = 'minecraft' | 'source' | 'id0';

/** The game a server most likely runs when the config does not say: what each transport is mostly used for. */
export function defaultPreset(executorType: ExecutorConfig['type']): PresetName {
  switch (executorType) {
    case 'rcon':
      return 'minecraft';
    case 'webrcon':
      return 'rust';
    case 'tshock':
      return 'terraria';
    case 'battleye':
      return 'dayz';
    case 'script':
      // Players of a script server come from `players.exec` when given; the preset then only
      // supplies failure patterns and a deny list, and a script has no game to take them from.
      return 'none';
    case 'telnet':
      return '7dtd';
  }
}

/** Minecraft answers auth with one packet, Palworld answers every request with id 0, the rest speak Source. */
export function defaultFlavour(preset: PresetName): RconFlavour {
  if (preset === 'minecraft') return 'minecraft';
  if (preset === 'palworld') return 'id0';
  return 'source';
}

/**
 * `exec[0]` with a slash is a path and is resolved against the config file's folder; a bare name
 * is left for the PATH lookup, as a shell would do.
 */
export function resolveExecutable(exec: readonly string[], baseDir: string): string[] {
  const [program, ...args] = exec;
  if (program === undefined) return [];
  const resolved = program.includes('/') && !isAbsolute(program) ? resolve(baseDir, program) : program;
  return [resolved, ...args];
}

const playersDefaults: PlayersConfig = playersSchema.parse({});

/** Fills the preset, flavour and paths of one parsed server; `password` was resolved by the caller. */
export function resolveServer(server: ServerConfig, baseDir: string, password: string | undefined): ResolvedServer {
  const players = server.players ?? playersDefaults;
  const preset = players.preset ?? defaultPreset(server.executor.type);
  const { preset: _preset, exec: playersExec, ...playersRest } = players;
  const resolvedPlayers: ResolvedServer['players'] = {
    ...playersRest,
    ...(playersExec !== undefined && { exec: resolveExecutable(playersExec, baseDir) }),
    preset,
  };
  return { ...server, executor: resolveExecutor(server.executor, preset, baseDir, password), players: resolvedPlayers };
}

function resolveExecutor(executor: ExecutorConfig, preset: PresetName, baseDir: string, password: string | undefined): ResolvedExecutor {
  switch (executor.type) {
    case 'rcon': {
      const { password: _inline, passwordFile: _file, flavour, ...rest } = executor;
      return { ...rest, password: password ?? '', flavour: flavour ?? defaultFlavour(preset) };
    }
    case 'webrcon': {
      const { password: _inline, passwordFile: _file, ...rest } = executor;
      return { ...rest, password: password ?? '' };
    }
    case 'tshock': {
      const { password: _inline, passwordFile: _file, ...rest } = executor;
      return { ...rest, password: password ?? '' };
    }
    case 'battleye': {
      const { password: _inline, passwordFile: _file, ...rest } = executor;
      return { ...rest, password: password ?? '' };
    }
    case 'script':
      return { ...executor, exec: resolveExecutable(executor.exec, baseDir) };
    case 'telnet': {
      const { password: _inline, passwordFile: _file, ...rest } = executor;
      return { ...rest, password: password ?? '' };
    }
  }
}
