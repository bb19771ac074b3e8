import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import type { Prompter } from './prompter.js';
import { differs } from './write-setup.js';

interface Target {
  readonly dir: string;
  /** The owner agreed (or passed --force) that the files there are replaced. */
  readonly replace: boolean;
}

/**
 * Where init will write, settled before the first question: files from an earlier run are found
 * now, not after every answer was given. On a terminal the owner chooses to replace them or to
 * name another folder; without one it ends here (exit 78) naming --force and --dir.
 */
export async function chooseTarget(
  prompter: Prompter,
  start: { readonly dir: string; readonly force: boolean; readonly cwd: string },
  names: readonly string[],
  /** Files init writes elsewhere for `dir` (--systemd's unit), replaced only when their text differs. */
  others: (dir: string) => readonly { readonly path: string; readonly text: string }[] = () => [],
): Promise<Target> {
  let dir = start.dir;
  for (;;) {
    const mine = start.force ? [] : names.filter((name) => existsSync(join(dir, name)));
    const theirs = start.force
      ? []
      : others(dir)
          .filter((file) => differs(file.path, file.text))
          .map((file) => file.path);
    if (mine.length + theirs.length === 0) return { dir, replace: start.force };
    const near = relative(start.cwd, dir);
    const shown = near === '' ? '.' : near.startsWith('..') ? dir : near;
    if (!prompter.interactive) {
      const paths = [...mine.map((name) => join(dir, name)), ...theirs];
      throw new ConfigError(
        `${paths.join(', ')} already exist${paths.length === 1 ? 's' : ''}: pass --force to replace, or --dir DIR to write elsewhere`,
      );
    }
    prompter.say(
      'warn',
      [
        mine.length > 0 && `${shown} already holds ${mine.join(', ')} (from an earlier porter init?)`,
        theirs.length > 0 && `${theirs.join(', ')} is there with other text`,
      ]
        .filter(Boolean)
        .join('; '),
    );
    const choice = await prompter.select<'replace' | 'elsewhere'>({
      message: 'What should porter init do with them?',
      flag: '--force or --dir',
      choices: [
        { value: 'replace', label: 'Replace them', hint: 'only at the end, once the login is proven' },
        { value: 'elsewhere', label: 'Write to another folder' },
      ],
    });
    if (choice === 'replace') return { dir, replace: true };
    dir = resolve(
      start.cwd,
      await prompter.text({
        message: 'Folder to write the configuration to',
        flag: '--dir',
        env: 'PORTER_INIT_DIR',
        initial: `${shown === '.' ? 'porter' : shown}-2`,
        validate: (value) => (value.trim() === '' ? 'a folder, e.g. ./porter-2' : undefined),
      }),
    );
  }
}
