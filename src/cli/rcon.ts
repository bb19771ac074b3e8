import type { ResolvedServer } from '../config/schema.js';
import { serverLabel } from '../config/server-label.js';
import type { TransportDescriptor } from '../protocols/transport-descriptor.js';
import type { Command } from 'commander';
import { systemClock } from '../clock.js';
import { UsageError } from '../errors.js';
import { action, loadConfigFor, pickServer, commandLogger } from './common.js';
import type { SecretBook } from '../secret-book.js';

export function registerRcon(program: Command, secrets: SecretBook): void {
  program
    .command('rcon')
    .description("send one console command to a server's game server and print its answer")
    .option('-c, --config <file>', 'config file (default: $PORTER_CONFIG)')
    .option('-s, --server <id>', 'server id or name (needed when the config has several)')
    .argument('<command...>', 'the console command, e.g. list')
    .addHelpText(
      'after',
      '\nExample:\n  porter rcon -c config.json list\n  porter rcon -c config.json --server survival give Steve diamond 1',
    )
    .action(
      action(secrets, async (words: string[], options: { config?: string; server?: string }) => {
        const config = await loadConfigFor(options.config, secrets);
        const server = pickServer(config, options.server);
        // Loaded here, not at the top: the transport list builds zod schemas, and every command's
        // start-up (porter --help among them) would pay for that.
        const { transportOf } = await import('../protocols/transport-registry.js');
        const hasConsole = (s: ResolvedServer) => {
          const transport: TransportDescriptor = transportOf(s.executor.type);
          return transport.console !== undefined;
        };
        if (!hasConsole(server)) {
          // The server named (or the only one) is one porter rcon cannot use: a usage error, like an unknown --server.
          const consoles = config.servers.filter(hasConsole).map((s) => serverLabel(s));
          throw new UsageError(
            `server ${serverLabel(server)} uses a ${server.executor.type} executor, which has no console: run the ${server.executor.type} itself to test it${consoles.length > 0 ? `, or use --server with one of ${consoles.join(', ')}` : ''}`,
          );
        }
        const [{ gameFor }, { createExecutor }] = await Promise.all([
          import('../games/registry.js'),
          import('../protocols/executor-registry.js'),
        ]);
        const executor = await createExecutor(server.executor, {
          logger: await commandLogger(config, secrets),
          clock: systemClock,
          passwordHint: gameFor(server.players).rconPassword,
        });
        try {
          await executor.connect();
          // The game's answer may echo its password (some answer a failed login with it): scrubbed like any output.
          const answer = secrets.scrub(await executor.query(words.join(' ')));
          process.stdout.write(answer.endsWith('\n') || answer === '' ? answer : `${answer}\n`);
        } finally {
          await executor.close();
        }
      }),
    );
}
