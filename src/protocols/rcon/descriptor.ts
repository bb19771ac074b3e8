import { z } from 'zod';
import type { GameName } from '../../games/registry.js';
import { defineTransport, GAME_PASSWORD, gameHost, port, positiveMs, secretSources, withPassword } from '../transport-descriptor.js';

/**
 * Minecraft reads a request with one 1,460-byte read and closes the connection when the read is
 * not exactly one packet: 1,460 minus 14 bytes of framing leaves 1,446 bytes of command.
 */
const MINECRAFT_MAX_COMMAND_BYTES = 1446;

export type RconFlavour = 'minecraft' | 'source' | 'id0';

const schema = z
  .strictObject({
    type: z.literal('rcon'),
    host: gameHost,
    port: port.default(25575).describe("The game server's RCON port."),
    ...secretSources,
    timeoutMs: positiveMs(5000).describe("Deadline for one command's answer."),
    connectTimeoutMs: positiveMs(5000).describe('Deadline for the TCP connect plus the login.'),
    flavour: z
      .enum(['minecraft', 'source', 'id0'])
      .optional()
      .describe(
        'Server dialect: minecraft, source or id0 (Palworld). Defaults from the players preset (minecraft → minecraft, palworld → id0, others → source); a minecraft or source connection whose server answers with id 0 switches to id0 by itself, with one warning.',
      ),
    maxRequestBytes: z
      .number()
      .int()
      .min(32)
      .max(4096)
      .default(MINECRAFT_MAX_COMMAND_BYTES)
      .describe(
        "The most bytes (UTF-8) a command may have; a longer command is failed unsent, never cut. 1,446 is Minecraft's limit: its 1,460-byte read less 14 bytes of packet framing.",
      ),
  })
  .describe(
    'Source RCON over TCP: Minecraft Java, Source games (CS2, GMod, TF2), ARK, Palworld, Squad, Conan Exiles, Factorio, Project Zomboid.',
  );

/** Minecraft answers auth with one packet, Palworld answers every request with id 0, the rest speak Source. */
function defaultFlavour(preset: GameName): RconFlavour {
  if (preset === 'minecraft') return 'minecraft';
  if (preset === 'palworld') return 'id0';
  return 'source';
}

/** Source RCON over TCP (Minecraft Java, Source games, ARK, Palworld, …). */
export const rconTransport = defineTransport({
  type: 'rcon',
  schema,
  defaultPreset: 'minecraft',
  secret: GAME_PASSWORD,
  console: { name: 'RCON', secretLabel: 'rcon password of the game server' },
  openFiles: 1,
  resolve: (parsed: z.output<typeof schema>, { preset, password }) => {
    const { flavour, ...rest } = withPassword(parsed, password);
    return { ...rest, flavour: flavour ?? defaultFlavour(preset) };
  },
});
