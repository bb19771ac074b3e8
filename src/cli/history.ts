import type { Command } from 'commander';
import { DEFAULT_HISTORY_LIMIT, parseHistoryQuery, selectHistory } from '../delivery/history/history-query.js';
import { action } from './common.js';
import type { SecretBook } from '../secret-book.js';

/** EX_USAGE: a flag or a value the command cannot use (docs/design.md#cli-and-exit-codes). */

interface HistoryOptions {
  config?: string;
  player?: string;
  id?: string;
  failed?: boolean;
  since?: string;
  limit?: string;
  json?: boolean;
}

export function registerHistory(program: Command, secrets: SecretBook): void {
  program
    .command('history')
    .description("what became of the last deliveries: time, server, command id, outcome, ms, command, the game's answer or why it failed")
    .option('-c, --config <file>', 'config file (default: $PORTER_CONFIG); the history is read from its stateDir, no secret is needed')
    .option('-p, --player <name>', 'only commands that name this player (a whole word, in any case)')
    .option('--id <id>', 'only this command id')
    .option('--failed', 'only deliveries that failed')
    .option('--since <when>', 'only deliveries since 30s, 15m, 2h, 7d ago, or since an ISO time (2026-01-31T18:00:00Z)')
    .option('-n, --limit <n>', `at most this many, the newest (default ${DEFAULT_HISTORY_LIMIT})`)
    .option('--json', 'one JSON record per line, whole texts, as stored')
    .addHelpText(
      'after',
      [
        '',
        'Oldest first, newest last (like a log). Works while porter runs and after it stopped.',
        "The store sends no player field, so --player looks for the name in the command's text.",
        '',
        'Examples:',
        '  porter history -c config.json --player Steve',
        '  porter history -c config.json --failed --since 2h --json',
        '',
        'Exit codes: 0 answered (also when nothing matched), 64 a flag or flag value it cannot use, 78 a bad config or a history file that is not a regular file.',
      ].join('\n'),
    )
    // commander's own usage errors (an unknown flag, a missing value) exit 1 by default; here they are usage errors too.
    .action(
      action(secrets, async (options: HistoryOptions) => {
        // Flag values first: a mistyped --since is reported before the config is even read.
        const query = parseHistoryQuery(options, Date.now(), (key) => `--${key}`);
        const [{ configPathFrom }, { stateDirOf }, { readHistory }, { historyTable }] = await Promise.all([
          import('../config/load.js'),
          import('../config/state-dir-of.js'),
          import('../delivery/history/history-file.js'),
          import('./history-table.js'),
        ]);
        // No secret is needed, nor resolved: the daemon scrubbed every record of them before writing it.
        const stateDir = await stateDirOf(configPathFrom(options.config, process.env));
        const records = await readHistory(stateDir);
        const selected = selectHistory(records, query);
        if (selected.length === 0) {
          process.stderr.write(
            records.length === 0
              ? `porter: no deliveries recorded yet in ${stateDir} (history.jsonl)\n`
              : `porter: none of the ${records.length} deliveries recorded match\n`,
          );
          return;
        }
        const text = options.json ? selected.map((record) => `${JSON.stringify(record)}\n`).join('') : historyTable(selected);
        process.stdout.write(text);
      }),
    );
}
