import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEMO_GAME_NAMES, type DemoGameName } from '../demo/demo-game-names.js';
import { defaultSimStatePath } from '../demo/sim-state.js';
import { action, daemonLogger } from './common.js';
import type { SecretBook } from '../secret-book.js';

export function registerDemo(program: Command, secrets: SecretBook): void {
  program
    .command('demo')
    .description('run porter against a simulated store API and game server on 127.0.0.1: no setup, no network')
    .addOption(new Option('--game <name>', 'the simulated game server').choices(DEMO_GAME_NAMES).default('minecraft'))
    .option('--keep-running', 'keep delivering after the sample purchases, and take more from porter sim buy (stop with Ctrl-C)', false)
    .option('--join-after <ms>', 'when the player Alex joins the game', joinAfterMs, 3000)
    .addHelpText(
      'after',
      '\nExamples:\n  porter demo\n  porter demo --game zomboid\n\nShows purchases being claimed, run over RCON and reported, then a summary of what the store saw.',
    )
    .action(
      action(secrets, async (options: { game: DemoGameName; keepRunning: boolean; joinAfter: number }) => {
        const [{ runDemo }, { flushLogger }] = await Promise.all([import('../demo/demo.js'), import('../log.js')]);
        let logger: Awaited<ReturnType<typeof daemonLogger>> | undefined;
        const code = await runDemo({
          game: options.game,
          keepRunning: options.keepRunning,
          joinAfterMs: options.joinAfter,
          out: process.stdout,
          statePath: () => defaultSimStatePath(),
          logger: async (config) => (logger = await daemonLogger(config, secrets)),
          secrets,
        });
        if (logger) await flushLogger(logger);
        return code;
      }),
    );
}

/** A whole number of milliseconds; `abc` or `-5` is a usage error (exit 64), not a NaN the demo runs with. */
function joinAfterMs(value: string): number {
  if (!/^\d{1,9}$/.test(value.trim())) throw new InvalidArgumentError('expected a whole number of milliseconds, e.g. 3000');
  return Number.parseInt(value, 10);
}
