import { Option, type Command } from 'commander';
import { DEMO_GAME_NAMES, type DemoGameName } from '../demo/demo-game-names.js';
import { DEFAULT_SIM_STATE_TEXT, defaultSimStatePath } from '../demo/sim-state.js';
import { action } from './common.js';
import type { SecretBook } from '../secret-book.js';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export function registerSim(program: Command, secrets: SecretBook): void {
  const sim = program
    .command('sim')
    .description(
      'a simulated store and game server on 127.0.0.1 that run until Ctrl-C: rehearse init, check, run and history with no store',
    )
    .addOption(new Option('--game <name>', 'the simulated game server').choices(DEMO_GAME_NAMES).default('minecraft'))
    .option('--json', 'print the config values as one JSON line, then one JSON line per event (for scripts)', false)
    .option('--state <file>', `where porter sim buy finds this sim (default: ${DEFAULT_SIM_STATE_TEXT})`)
    .addHelpText(
      'after',
      [
        '',
        'Prints what goes in a config (store URL, token, server id, game server address and password), then each',
        'purchase, claim, report and game command as it happens. The token and password are new each run.',
        '',
        'Examples:',
        '  porter sim --game zomboid',
        '  porter sim buy "give {player} diamond 1" --player Steve     (from another terminal)',
        '',
        'Stops on Ctrl-C, SIGTERM or SIGHUP with exit 0. Exit codes: 64 a flag value it cannot use, 1 another sim already runs on the state file.',
      ].join('\n'),
    )
    .action(
      action(secrets, async (options: { game: DemoGameName; json: boolean; state?: string }) => {
        const { runSim } = await import('../demo/sim.js');
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
        try {
          return await runSim({
            game: options.game,
            json: options.json,
            statePath: options.state ?? defaultSimStatePath(),
            out: process.stdout,
            stop: stop.signal,
          });
        } finally {
          for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
        }
      }),
    );

  sim
    .command('buy')
    .description("buy something in the running sim's store: the command reaches porter as a store's purchase would")
    .argument('<command...>', 'the product\'s command; {player} stands for the buyer\'s name, e.g. "give {player} diamond 1"')
    .option('-p, --player <name>', "the buyer's name: put in place of {player}, and the player who must be online")
    .option('--offline', 'deliver even when the player is not online', false)
    .option('--state <file>', `the running sim's state file (default: ${DEFAULT_SIM_STATE_TEXT})`)
    .option('--json', 'print the queued purchase as JSON', false)
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  porter sim buy "give {player} diamond 1" --player Steve',
        '  porter sim buy say Thanks for buying',
        '',
        'Exit codes: 0 queued, 64 a purchase a store would refuse (a player name with a line break, {player} without --player), 1 no sim running.',
      ].join('\n'),
    )
    .action(
      action(secrets, async (words: string[], options: { player?: string; offline: boolean; state?: string; json: boolean }) => {
        const { buy } = await import('../demo/sim-buy.js');
        const queued = await buy(
          { command: words.join(' '), player: options.player, offline: options.offline || undefined },
          options.state ?? defaultSimStatePath(),
        );
        const who = queued.player === undefined ? '' : ` for ${queued.player}${queued.offlineExecute ? '' : ' (delivered when online)'}`;
        process.stdout.write(options.json ? `${JSON.stringify(queued)}\n` : `bought #${queued.id}: ${queued.command}${who}\n`);
      }),
    );
}
