import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { ConfigError, PorterError, UsageError } from '../errors.js';

/** What `porter check` needs from a unit to run as its service would: user, state directory, credentials. */
interface UnitService {
  readonly unit: string;
  /** ExecStart='s program and arguments. */
  readonly execStart: readonly string[];
  readonly dynamicUser: boolean;
  readonly user: string | undefined;
  readonly stateDirectories: readonly string[];
  /** LoadCredential= values, `name:path`. */
  readonly credentials: readonly string[];
}

/** systemd-run could not be started, or stopped by a signal. */
class UnitCheckError extends PorterError {
  override readonly code = 'E_UNIT_CHECK';
}

/** The unit's name with its suffix: `porter` → `porter.service`. */
export function unitName(name: string): string {
  return /\.service$/.test(name) ? name : `${name}.service`;
}

/**
 * The [Service] settings of `systemctl cat UNIT` (the unit file and its drop-ins, in the order
 * systemd applies them): a later assignment overrides, and an empty list setting resets the list,
 * as systemd reads them.
 */
export function parseUnit(unit: string, text: string): UnitService {
  let section = '';
  let execStart: string[] = [];
  let dynamicUser = false;
  let user: string | undefined;
  let stateDirectories: string[] = [];
  let credentials: string[] = [];
  for (const line of text.replace(/\\\n/g, ' ').split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(trimmed);
    if (header) {
      section = header[1]!;
      continue;
    }
    const equals = trimmed.indexOf('=');
    if (section !== 'Service' || equals < 0) continue;
    const key = trimmed.slice(0, equals).trim();
    const value = trimmed.slice(equals + 1).trim();
    const words = value.split(/\s+/).filter(Boolean);
    switch (key) {
      case 'ExecStart':
        // The prefixes -, @, :, +, ! change how systemd runs the program, not which one.
        execStart = words.length ? [words[0]!.replace(/^[-@:+!]+/, ''), ...words.slice(1)] : [];
        break;
      case 'DynamicUser':
        dynamicUser = /^(yes|true|on|1)$/i.test(value);
        break;
      case 'User':
        user = value || undefined;
        break;
      case 'StateDirectory':
        stateDirectories = words.length ? [...stateDirectories, ...words] : [];
        break;
      case 'LoadCredential':
        credentials = value ? [...credentials, value] : [];
        break;
    }
  }
  return { unit, execStart, dynamicUser, user, stateDirectories, credentials };
}

/** The config the unit's `porter run` reads: its --config or -c argument. */
export function configOfUnit(service: UnitService): string | undefined {
  const args = service.execStart;
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    if ((arg === '--config' || arg === '-c') && i + 1 < args.length) return args[i + 1];
    const joined = /^--config=(.+)$/.exec(arg);
    if (joined) return joined[1];
  }
  return undefined;
}

/**
 * `systemd-run` arguments for `porter check` as the unit's service: the same (dynamic) user, by
 * name, so a running service keeps its user and its state directory's owner; the same state
 * directory; the same credentials; the unit's own porter.
 */
export function checkArgs(service: UnitService, config: string): string[] {
  const program = service.execStart[0];
  if (!program) throw new ConfigError(`${service.unit} has no ExecStart=: it does not say which porter it runs`);
  const user = service.user ?? (service.dynamicUser ? service.unit.replace(/\.service$/, '') : undefined);
  return [
    '--pipe',
    '--wait',
    '--quiet',
    '--collect',
    ...(service.dynamicUser ? ['-p', 'DynamicUser=yes'] : []),
    ...(user !== undefined ? ['-p', `User=${user}`] : []),
    ...(service.stateDirectories.length ? ['-p', `StateDirectory=${service.stateDirectories.join(' ')}`] : []),
    ...service.credentials.flatMap((credential) => ['-p', `LoadCredential=${credential}`]),
    program,
    'check',
    '-c',
    config,
  ];
}

/** Reads the unit as systemd has it loaded (file and drop-ins). */
async function readUnit(name: string): Promise<UnitService> {
  const unit = unitName(name);
  const text = await new Promise<string>((resolve, reject) => {
    execFile('systemctl', ['cat', '--no-pager', unit], { timeout: 30_000 }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'systemctl is not installed' : stderr.trim() || error.message;
      reject(new ConfigError(`cannot read the unit ${unit}: ${reason}. Install it first (docs/install.md#install)`));
    });
  });
  return parseUnit(unit, text);
}

/**
 * `porter check` run by systemd as the unit's service runs (docs/install.md): root can read
 * files the service cannot, and only the service holds the credentials. Its report goes to this
 * process's stdout and stderr; returns its exit code.
 */
export async function checkAsUnit(name: string, config: string | undefined): Promise<number> {
  if (process.getuid?.() !== 0) {
    throw new UsageError(
      `porter check --unit asks systemd to run porter check as ${unitName(name)}'s user with its credentials: run it as root (sudo)`,
    );
  }
  const service = await readUnit(name);
  const path = config ?? configOfUnit(service);
  if (path === undefined) throw new ConfigError(`${service.unit} runs porter without --config: name the config with -c FILE`);
  const args = checkArgs(service, path);
  const program = service.execStart[0]!;
  if (!existsSync(program)) {
    throw new ConfigError(
      `${service.unit} runs ${program}, which does not exist: install porter there (npm install -g --prefix /usr/local, docs/install.md) or point ExecStart= at it (sudo systemctl edit ${service.unit})`,
    );
  }
  return new Promise((resolve, reject) => {
    const child = spawn('systemd-run', args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', (error) => reject(new UnitCheckError(`cannot run systemd-run: ${error.message}`)));
    child.on('close', (code, signal) => {
      if (code !== null) resolve(code);
      else reject(new UnitCheckError(`systemd-run stopped by ${signal}`));
    });
  });
}
