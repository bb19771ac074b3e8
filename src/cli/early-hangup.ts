/**
 * Node's default for SIGHUP ends the process with no drain. `porter run` reloads on SIGHUP, so
 * from the first line porter runs until the daemon installs its own handler, a SIGHUP is held
 * here and handed to the daemon, which reloads once it runs (the config it read may be the old
 * one). main.ts imports this module first. Other commands keep the default: a terminal that
 * closes under `porter init` should end it.
 */
const command = process.argv.slice(2).find((arg) => !arg.startsWith('-'));
let held = false;
const hold = () => {
  held = true;
};
if (command === 'run') process.on('SIGHUP', hold);

/** Whether a SIGHUP came before the daemon could take it; the daemon's own handler takes over from here. */
export function takeEarlyHangup(): boolean {
  process.off('SIGHUP', hold);
  return held;
}
