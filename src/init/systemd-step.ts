import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isSea } from 'node:sea';
import { join } from 'node:path';
import { ConfigError, PorterError } from '../errors.js';
import type { Prompter } from './prompter.js';
import { checkAsUnit } from './unit-check.js';
import { packageText } from '../package-files.js';

/** Where systemd reads units an administrator installs. */
export const SYSTEM_UNIT_DIR = '/etc/systemd/system';
const UNIT = 'porter.service';
/** The folder systemd/porter.service names for the config and the credential files. */
const UNIT_CONFIG_DIR = '/etc/porter';

const after = [
  '  journalctl -u porter -f',
  'After editing the config later: sudo porter check --unit porter && sudo systemctl reload porter',
];

/** The check as the service, run by `porter init --systemd`, failed: its report is above. */
class UnitCheckFailedError extends PorterError {
  override readonly code = 'E_UNIT_CHECK_FAILED';
  override readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * The shipped unit (systemd/porter.service of this package), naming `dir` wherever it names
 * /etc/porter, to be installed as `unitDir`/porter.service.
 */
export function unitFile(dir: string, unitDir: string): { path: string; text: string } {
  const shipped = packageText('systemd/porter.service');
  if (shipped === undefined) throw new ConfigError('systemd/porter.service is missing from this installation: reinstall porter');
  const text = isSea() ? forSingleExecutable(shipped, process.execPath) : shipped;
  return { path: join(unitDir, UNIT), text: dir === UNIT_CONFIG_DIR ? text : text.replaceAll(`${UNIT_CONFIG_DIR}/`, `${dir}/`) };
}

/**
 * The shipped unit names an npm install (/usr/local/bin/porter, the docs under node_modules); a
 * single executable is one file wherever the owner put it, with no docs beside it: the unit runs
 * that file and points at the docs of its version online.
 */
export function forSingleExecutable(unit: string, executable: string): string {
  const docs = docsUrl();
  return unit
    .replace(/^ExecStart=\/usr\/local\/bin\/porter /m, `ExecStart=${executable} `)
    .replaceAll(/file:\/usr\/local\/lib\/node_modules\/porter-connector\/(\S+)/g, (whole: string, file: string) =>
      docs ? `${docs}/${file}` : whole,
    );
}

/** The docs of this version in the repository package.json names, or undefined without one. */
function docsUrl(): string | undefined {
  const text = packageText('package.json');
  if (text === undefined) return undefined;
  const { repository, version } = JSON.parse(text) as { repository?: { url?: string }; version?: string };
  const url = repository?.url?.replace(/^git\+/, '').replace(/\.git$/, '');
  return url && version ? `${url}/blob/v${version}` : undefined;
}

/**
 * After `porter init --systemd` wrote the files: on a host booted with systemd, with the unit
 * where systemd reads it and init running as root, systemd loads the unit and `porter check` runs
 * as its service will (dynamic user, credentials) before init says it is done. Otherwise it says
 * why not and prints each step that is left, exactly.
 */
export async function finishSystemd(prompter: Prompter, unitPath: string): Promise<void> {
  const installed = unitPath === join(SYSTEM_UNIT_DIR, UNIT);
  const booted = existsSync('/run/systemd/system');
  const root = process.getuid?.() === 0;
  if (installed && booted && root) {
    await systemctl(['daemon-reload']);
    prompter.say('info', `installed ${unitPath}; checking as the service will run (its dynamic user, its credentials):`);
    const code = await checkAsUnit(UNIT, undefined);
    if (code !== 0) {
      throw new UnitCheckFailedError(
        `porter check as the service failed (exit ${code}, above): fix what it names, then sudo porter check --unit porter`,
        // 78 (configuration or credentials) passes through; anything else, systemd-run's own codes included, is 1.
        code === 78 ? 78 : 1,
      );
    }
    prompter.say('ok', 'done: the service can read its config and credentials');
    // A service already running holds copies of the old credentials, taken when it started.
    const next = (await isActive()) ? '  sudo systemctl restart porter' : '  sudo systemctl enable --now porter';
    prompter.say('info', ['Next:', next, ...after].join('\n'));
    return;
  }
  const why = !booted ? 'this host is not running systemd' : !root ? 'init is not running as root' : `the unit was written to ${unitPath}`;
  prompter.say('warn', `not checked as the service yet: ${why}`);
  prompter.say(
    'info',
    [
      'Next, on the host that runs it:',
      ...(installed ? [] : [`  sudo install -m 0644 ${unitPath} ${join(SYSTEM_UNIT_DIR, UNIT)}`]),
      '  sudo systemctl daemon-reload',
      '  sudo porter check --unit porter',
      '  sudo systemctl enable --now porter',
      ...after,
    ].join('\n'),
  );
}

function systemctl(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('systemctl', args, { timeout: 60_000 }, (error, _stdout, stderr) => {
      if (error) reject(new ConfigError(`systemctl ${args.join(' ')} failed: ${stderr.trim() || error.message}`));
      else resolve();
    });
  });
}

function isActive(): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('systemctl', ['is-active', '--quiet', UNIT], { timeout: 60_000 }, (error) => resolve(!error));
  });
}
