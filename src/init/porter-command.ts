import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative } from 'node:path';

/**
 * How the person who ran `porter init` runs porter again, for the "Next:" lines: `npx porter` when
 * they came in through npx (a clone, where `porter` is not on the shell's PATH), `porter` when
 * that name on their PATH is this very program, else `node` and the path they ran.
 */
export function porterCommand(env: NodeJS.ProcessEnv, cwd: string, script: string | undefined = process.argv[1]): string {
  // First: npx puts the package's own bin on the PATH it runs porter with, but not on the shell's.
  if (env.npm_command === 'exec') return 'npx porter';
  if (script === undefined) return 'porter';
  const self = realOrUndefined(script);
  if (self !== undefined && (env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && isSelf(join(dir, 'porter'), self))) {
    return 'porter';
  }
  const shown = relative(cwd, script);
  return `node ${shown === '' || shown.startsWith('..') || isAbsolute(shown) ? script : shown}`;
}

function isSelf(candidate: string, self: string): boolean {
  try {
    accessSync(candidate, constants.X_OK);
    return realOrUndefined(candidate) === self;
  } catch {
    return false;
  }
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
