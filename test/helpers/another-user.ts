import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, parse } from 'node:path';

/**
 * porter run as another uid (systemd's DynamicUser=: a uid with no passwd entry) reads only what
 * every user may. A checkout under a home folder of mode 0700 or 0750, the default on many
 * distributions, is out of its reach, and so is the bundle built there. A test that runs porter
 * as another user runs this copy instead: the bundle (porter.js and its chunks) and the
 * package.json porter reads its version from, in a temp folder every user may read. The bundle
 * needs nothing of node_modules but pino-pretty, which it loads only on a terminal.
 */
export interface ForeignCli {
  /** The copy of porter.js to run. */
  readonly cli: string;
  /** Removes the copy. */
  readonly dispose: () => void;
}

/**
 * A copy of `cli` (the CLI the tests run: dist/bundle/porter.js) that any uid can run, or why
 * there is none: the CLI is not the bundle (tsc's dist/src needs node_modules), or the node
 * binary itself is out of another user's reach.
 */
export function cliForAnotherUser(cli: string): ForeignCli | { readonly skip: string } {
  const bundle = dirname(cli);
  if (basename(bundle) !== 'bundle') {
    return { skip: `the CLI under test is ${cli}, not the bundle: build it (node scripts/bundle.mjs) to run it as another user` };
  }
  const unreachable = unreachableByOthers(realpathSync(process.execPath));
  if (unreachable) return { skip: `another user cannot run node (${process.execPath}): ${unreachable}` };
  const root = mkdtempSync(join(tmpdir(), 'porter-foreign-'));
  const copy = join(root, 'dist', 'bundle');
  mkdirSync(copy, { recursive: true });
  for (const name of readdirSync(bundle).filter((file) => file.endsWith('.js'))) {
    copyFileSync(join(bundle, name), join(copy, name));
    chmodSync(join(copy, name), 0o644);
  }
  // The repository's package.json: porter finds its version by walking up from the bundle.
  copyFileSync(join(dirname(dirname(bundle)), 'package.json'), join(root, 'package.json'));
  chmodSync(join(root, 'package.json'), 0o644);
  // mkdtemp makes 0700 folders, and a umask of 077 would keep the copies to their owner.
  for (const folder of [root, join(root, 'dist'), copy]) chmodSync(folder, 0o755);
  return { cli: join(copy, basename(cli)), dispose: () => rmSync(root, { recursive: true, force: true }) };
}

/** Why a uid other than the owner's cannot run `file` (a folder on the way it may not enter), or undefined. */
function unreachableByOthers(file: string): string | undefined {
  if ((statSync(file).mode & 0o005) !== 0o005) return `${file} is not readable and executable by every user`;
  for (let folder = dirname(file); ; folder = dirname(folder)) {
    if ((statSync(folder).mode & 0o001) === 0) return `${folder} may not be entered by every user`;
    if (folder === parse(folder).root) return undefined;
  }
}
