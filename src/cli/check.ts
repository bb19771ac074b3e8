import type { Command } from 'commander';
import { action, shardFrom } from './common.js';

export function registerCheck(program: Command): void {
  program
    .command('check')
    .description('check the config, each game server login and player list, the API token and the state directory; claims nothing')
    .option('-c, --config <file>', 'config file (default: $PORTER_CONFIG)')
    .option('--shard <I/N>', 'check only the servers of shard I of N, as porter run --shard runs them (default: $PORTER_SHARD, else all)')
    .addHelpText(
      'after',
      '\nExample:\n  porter check -c /etc/porter/config.json\n\nExit 0 only when every line is ✔; 78 when a configuration or credentials check failed; 1 otherwise.',
    )
    .action(
      action(async (options: { config?: string; shard?: string }) => {
        const shard = await shardFrom(options.shard);
        const { runChecks } = await import('./check-run.js');
        return runChecks(options.config, shard);
      }),
    );
}
