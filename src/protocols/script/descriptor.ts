import { z } from 'zod';
import { defineTransport, positiveMs, resolveExecutable } from '../transport-descriptor.js';

const schema = z
  .strictObject({
    type: z.literal('script'),
    exec: z
      .array(z.string().min(1))
      .min(1)
      .describe(
        'Executable and fixed arguments; the command is appended as the last argument, never through a shell. A program path with a slash is relative to the config file; a bare name is looked up in PATH.',
      ),
    timeoutMs: positiveMs(30000).describe("Deadline for one command; the script's process group is killed after it."),
  })
  .describe('A local program run once per command.');

/** A local program run once per command: no console, no secret of porter's. */
export const scriptTransport = defineTransport({
  type: 'script',
  schema,
  // Players of a script server come from `players.exec` when given; the preset then only
  // supplies failure patterns and a deny list, and a script has no game to take them from.
  defaultPreset: 'none',
  defaultPresetNote: ' (players from players.exec when given)',
  // stdin, stdout and stderr of the script while it runs.
  openFiles: 3,
  resolve: (parsed: z.output<typeof schema>, { baseDir }) => ({ ...parsed, exec: resolveExecutable(parsed.exec, baseDir) }),
});
