import { InvalidArgumentError, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { action, reportFatal } from './common.js';
import type { SecretBook } from '../secret-book.js';

function port(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1 || number > 65535) throw new InvalidArgumentError('expected a port, 1 to 65535');
  return number;
}

export function registerInit(program: Command, secrets: SecretBook): void {
  program
    .command('init')
    .description('write a working configuration: proves the API token, picks the store server, finds and logs in to the game server')
    .option('--api-url <url>', 'store API address (env PORTER_API_URL)')
    .option('--token-file <file>', 'file holding the API token (env PORTER_API_TOKEN holds the token itself)')
    .option('--server-id <uuid>', "the store's server id (env PORTER_SERVER_ID)")
    .option('--game <name>', 'the game, when detection is not wanted or finds several (env PORTER_GAME)')
    .option('--game-dir <dir>', "the game server's folder to read its settings from (env PORTER_GAME_DIR; default: here)")
    .option('--rcon-host <host>', 'game server console host (env PORTER_RCON_HOST)')
    .option('--rcon-port <port>', 'game server console port (env PORTER_RCON_PORT)', port)
    .option('--rcon-password-file <file>', 'file holding the console password (env PORTER_RCON_PASSWORD holds it itself)')
    .option(
      '--dir <dir>',
      'where to write config.json and the secret files (env PORTER_INIT_DIR; default ./porter, /etc/porter with --systemd)',
    )
    .option('-y, --yes', 'use what was detected without asking', false)
    .option('--fix-game-settings', "apply the offered edits to the game's settings file (switch RCON on, set a password)", false)
    .option('--force', 'replace files that exist', false)
    .option(
      '--systemd',
      'lay the files out for systemd/porter.service (config 0644, secrets 0600 as its credentials, state in /var/lib/porter), install the unit and, under a running systemd, check as the service will run',
      false,
    )
    .option('--unit-dir <dir>', 'with --systemd: where to install porter.service (default /etc/systemd/system)')
    .addHelpText(
      'after',
      [
        '',
        'On a terminal every missing answer is asked; without one, a missing answer ends init with exit 78 naming its flag.',
        '',
        'Examples:',
        '  porter init',
        '  porter init --api-url https://seller.example.com --token-file token.txt --server-id 1b4e28ba-… --game-dir /srv/minecraft --yes',
      ].join('\n'),
    )
    .action(
      action(secrets, async (options: Parameters<typeof import('../init/init.js').runInit>[0]) => {
        if (options.unitDir !== undefined && !options.systemd)
          throw new UsageError('--unit-dir goes with --systemd: it says where the unit goes');
        const [{ runInit }, { flagsOnlyPrompter, InitCancelledError, terminalPrompter }, { SettingsChanges }] = await Promise.all([
          import('../init/init.js'),
          import('../init/prompter.js'),
          import('../init/settings-change.js'),
        ]);
        const onTerminal = process.stdin.isTTY && process.stdout.isTTY;
        const scrub = secrets.scrub;
        const prompter = onTerminal ? await terminalPrompter(scrub) : flagsOnlyPrompter(process.stdout, scrub);
        const changes = new SettingsChanges();
        // Ctrl-C at a question is the prompt's (raw mode); this is Ctrl-C while init proves a token or a login.
        const interrupted = () => {
          reportFatal(new InitCancelledError(changes.describe()), secrets);
          process.exit(130);
        };
        process.once('SIGINT', interrupted);
        try {
          await runInit(options, { prompter, env: process.env, onSecret: (secret) => secrets.add(secret), cwd: process.cwd(), changes });
        } finally {
          process.off('SIGINT', interrupted);
        }
      }),
    );
}
