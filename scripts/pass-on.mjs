import { spawn } from 'node:child_process';

/**
 * Runs `command` in this script's place: its output is this script's, a SIGINT or SIGTERM meant
 * for the run reaches it (it ends what it started), and this process exits with its exit code.
 */
export function passOn(name, command, args, env = process.env) {
  const child = spawn(command, args, { env, stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) console.error(`${name}: ${command} ended by ${signal}`);
    process.exit(code ?? 1);
  });
}
