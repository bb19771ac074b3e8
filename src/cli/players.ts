import type { Command } from 'commander';
import { systemClock } from '../clock.js';
import { action, loadConfigFor, pickServer, commandLogger } from './common.js';
import type { SecretBook } from '../secret-book.js';

export function registerPlayers(program: Command, secrets: SecretBook): void {
  program
    .command('players')
    .description('print the online identifiers exactly as porter sends them with a pull, one per line')
    .option('-c, --config <file>', 'config file (default: $PORTER_CONFIG)')
    .option('-s, --server <id>', 'server id or name (needed when the config has several)')
    .addHelpText(
      'after',
      '\nExample:\n  porter players -c config.json\n\nNothing but identifiers is printed on stdout; problems go to stderr.',
    )
    .action(
      action(secrets, async (options: { config?: string; server?: string }) => {
        const config = await loadConfigFor(options.config, secrets);
        const server = pickServer(config, options.server);
        const logger = await commandLogger(config, secrets);
        const [{ createExecutor }, { playerReader }, { normalizeIdentifiers }, { gameFor }] = await Promise.all([
          import('../protocols/executor-registry.js'),
          import('../players/reader.js'),
          import('../players/normalize.js'),
          import('../games/registry.js'),
        ]);
        const game = gameFor(server.players);
        const executor = await createExecutor(server.executor, { logger, clock: systemClock, passwordHint: game.rconPassword });
        let raw: string[];
        try {
          // A player-list script needs no connection to the game server.
          if (!server.players.exec) await executor.connect();
          raw = await playerReader(server.players, game, executor, logger)();
        } finally {
          await executor.close();
        }
        const { ids, cut } = normalizeIdentifiers(raw);
        if (cut > 0) logger.warn({ event: 'players.cut', cut }, 'more than 4,096 identifiers: the rest are not sent');
        process.stdout.write(ids.map((id) => `${id}\n`).join(''));
        const graceMs = server.players.joinGraceMs;
        // One read is porter's first read: everyone on it counts as settled, so this prints what a
        // porter started now would send. A running one holds back whoever it saw join lately.
        if (graceMs > 0) {
          process.stderr.write(
            `porter: players.joinGraceMs is ${graceMs} ms: a running porter leaves a player out of its pulls for that long after it first lists them; this one read counts everyone listed as settled, as porter's first read after a start does\n`,
          );
        }
      }),
    );
}
