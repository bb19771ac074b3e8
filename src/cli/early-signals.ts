/**
 * `porter run` is a daemon from its first line: a signal that arrives while the rest of it loads
 * (the config, its secret files, the daemon's modules) is held here and handed to the daemon once
 * it installs its own handlers (docs/design.md#lifecycle). Node's default for SIGHUP, SIGTERM and
 * SIGINT ends the process without a word and with no exit code of porter's. So:
 * - a SIGHUP is held, and the daemon reloads once it runs (the config it read may be the old one);
 * - a SIGTERM or SIGINT is held, and the daemon stops as soon as it opened, before it connects or
 *   claims anything, exit 0; a second one while porter still loads exits 0 at once, since nothing
 *   can have been claimed yet.
 * main.ts imports this module first. Other commands keep the defaults: a terminal that closes
 * under `porter init` should end it.
 */
const command = process.argv.slice(2).find((arg) => !arg.startsWith('-'));
let hangup = false;
let stop = false;

const holdHangup = () => {
  hangup = true;
};
const holdStop = () => {
  if (stop) process.exit(0);
  stop = true;
};

if (command === 'run') {
  process.on('SIGHUP', holdHangup);
  process.on('SIGTERM', holdStop);
  process.on('SIGINT', holdStop);
}

/** What came before the daemon could take it; from here on the daemon's own handlers take every signal. */
export function takeEarlySignals(): { readonly hangup: boolean; readonly stop: boolean } {
  process.off('SIGHUP', holdHangup);
  process.off('SIGTERM', holdStop);
  process.off('SIGINT', holdStop);
  return { hangup, stop };
}

/** Whether a stop came while porter loaded: `porter run` then exits 0 without starting the daemon. */
export function stopRequestedEarly(): boolean {
  return stop;
}
