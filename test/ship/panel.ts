import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILD_FLAGS, podman } from './podman.js';

/**
 * What a game panel's node daemon (Pterodactyl's Wings, Pelican's fork of it) does with an egg,
 * done here in podman, from their sources:
 * - the install: Wings' server/install.go writes the egg's script to install.sh (CRLF made LF)
 *   and runs `<entrypoint> /mnt/install/install.sh` in the egg's installation container, as the
 *   image's user, with a terminal, the server folder bound at /mnt/server, /tmp a tmpfs, and the
 *   server's environment;
 * - before each start: the egg's configuration files are rewritten from the variables
 *   (the panel's EggConfigurationService turns `{{server.build.env.X}}` into the value, Wings'
 *   parser/helpers.go sets each dotted path, `name[0].rest` into an array, and a value that
 *   parses as an integer is written as a number), then the server folder is chowned to the
 *   daemon's user (server/power.go, onBeforeStart);
 * - the start: environment/docker/container.go makes a container with a terminal and stdin, the
 *   daemon's uid:gid (988 by default, config/config.go), a read-only root, /tmp a tmpfs,
 *   no-new-privileges, ten capabilities dropped, the folder at /home/container, and the
 *   environment STARTUP, TZ, SERVER_MEMORY, SERVER_IP, SERVER_PORT and the egg's variables;
 * - the Node.js yolk (pelican-eggs/yolks nodejs/24: node:24-bookworm-slim, the user `container`,
 *   `tini -g` as PID 1, then entrypoint.sh): it goes to /home/container, prints `node -v`, turns
 *   each `{{X}}` of STARTUP into `${X}`, prints the line and lets bash `eval` it;
 * - a stop of type signal (`^SIGTERM`) is `docker kill --signal`; Pelican's Wings sends SIGKILL
 *   10 s later if the container still runs (environment/docker/power.go, Terminate).
 */

/** The uid and gid Wings runs servers as when its config says nothing else. */
export const WINGS_UID = 988;
/** Capabilities Wings drops from every server container. */
export const WINGS_CAP_DROP = [
  'setpcap',
  'mknod',
  'audit_write',
  'net_raw',
  'dac_override',
  'fowner',
  'fsetid',
  'net_bind_service',
  'sys_chroot',
  'setfcap',
];
/** Pelican's Wings: the SIGKILL after a signal stop. */
export const PELICAN_KILL_AFTER_MS = 10_000;

export interface Egg {
  meta: { version: string; update_url: string | null };
  name: string;
  author: string;
  docker_images: Record<string, string>;
  startup: string;
  config: { files: string; startup: string; logs: string; stop: string };
  scripts: { installation: { script: string; container: string; entrypoint: string } };
  variables: Array<{
    name: string;
    description: string;
    env_variable: string;
    default_value: string;
    user_viewable: boolean;
    user_editable: boolean;
    rules: string;
    field_type: string;
  }>;
}

/** The yolk's entrypoint, as its behaviour is described above. */
const ENTRYPOINT = `#!/bin/bash
cd /home/container || exit 1
node -v
EXPANDED=$(echo -e \${STARTUP} | sed -e 's/{{/\${/g' -e 's/}}/}/g')
echo ":/home/container$ \${EXPANDED}"
eval \${EXPANDED}
`;

const CONTAINERFILE = `ARG BASE
FROM \${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends iproute2 && apt-get clean && rm -rf /var/lib/apt/lists/* \\
 && useradd -m -d /home/container container
USER container
ENV USER=container HOME=/home/container
WORKDIR /home/container
STOPSIGNAL SIGINT
COPY entrypoint.sh /entrypoint.sh
ENTRYPOINT ["/usr/bin/tini", "-g", "--"]
CMD ["/entrypoint.sh"]
`;

/** A stand-in for the Node.js yolk on the Debian node base. */
export async function buildYolk(base: string): Promise<string> {
  const name = `localhost/porter-test-yolk:${base.split(':').at(-1)}`;
  const dir = mkdtempSync(join(tmpdir(), 'porter-yolk-'));
  try {
    writeFileSync(join(dir, 'Containerfile'), CONTAINERFILE);
    writeFileSync(join(dir, 'entrypoint.sh'), ENTRYPOINT);
    chmodSync(join(dir, 'entrypoint.sh'), 0o755);
    await podman(['build', ...BUILD_FLAGS, '--build-arg', `BASE=${base}`, '-t', name, '-f', join(dir, 'Containerfile'), dir], {
      timeoutMs: 900_000,
    });
    return name;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The panel's placeholder replacement: `{{server.build.env.X}}` and `{{env.X}}` become the variable's value. */
function placeholders(value: string, env: Record<string, string>): string {
  return value.replace(/{{(server\.build\.env|env)\.(\w+)}}/g, (_, __: string, name: string) => env[name] ?? '');
}

/** Wings' path setter: `a.b`, and `a[0].b` into an array (parser/helpers.go, setValueAtPath). */
function setAtPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const array = /^([^[\]]+)\[(\d+)](\..+)?$/.exec(path);
  if (array) {
    const list = target[array[1]!] as unknown[];
    if (!Array.isArray(list)) throw new Error(`${array[1]} is not an array`);
    const element = list[Number(array[2])];
    if (array[3] === undefined) list[Number(array[2])] = value;
    else setAtPath(element as Record<string, unknown>, array[3].slice(1), value);
    return;
  }
  const [head, ...rest] = path.split('.');
  if (rest.length === 0) {
    target[head!] = value;
    return;
  }
  const next = (target[head!] ??= {}) as Record<string, unknown>;
  setAtPath(next, rest.join('.'), value);
}

/** Rewrites the egg's configuration files in `dir` from the variables, as the panel and Wings do before a start. */
export function applyConfigFiles(egg: Egg, env: Record<string, string>, dir: string): void {
  const files = JSON.parse(egg.config.files) as Record<string, { parser: string; find: Record<string, string> }>;
  for (const [file, { parser, find }] of Object.entries(files)) {
    if (parser !== 'json') throw new Error(`${file}: only the json parser is done here`);
    const data = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
    for (const [path, template] of Object.entries(find)) {
      const value = placeholders(template, env);
      // strconv.Atoi: an optional sign and decimal digits become a number.
      setAtPath(data, path, /^[+-]?\d+$/.test(value) ? Number(value) : value);
    }
    writeFileSync(join(dir, file), JSON.stringify(data, null, 4));
  }
}

/** The environment Wings gives the installer and the server: its own variables, then the egg's. */
export function wingsEnvironment(egg: Egg, values: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {
    TZ: 'UTC',
    STARTUP: egg.startup,
    SERVER_MEMORY: '512',
    SERVER_IP: '0.0.0.0',
    SERVER_PORT: '25599',
    P_SERVER_LOCATION: 'test',
    P_SERVER_UUID: '9f3c4b2a-0d6e-4c1a-8b7f-2e5d6a9c0b13',
  };
  for (const variable of egg.variables) env[variable.env_variable] = values[variable.env_variable] ?? variable.default_value;
  return env;
}

export function envFlags(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([key, value]) => ['-e', `${key}=${value}`]);
}

/** A signal stop as Pelican's Wings does it: the signal, then SIGKILL if still running 10 s later. */
export async function pelicanStop(name: string, signal: string): Promise<{ killed: boolean; exitCode: number }> {
  await podman(['kill', '-s', signal, name]);
  const deadline = Date.now() + PELICAN_KILL_AFTER_MS;
  let running = true;
  while (running && Date.now() < deadline) {
    running = (await podman(['inspect', '--format', '{{.State.Running}}', name])).stdout.trim() === 'true';
    if (running) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (running) await podman(['kill', '-s', 'KILL', name], { allowFailure: true });
  await podman(['wait', name], { allowFailure: true });
  const exitCode = Number((await podman(['inspect', '--format', '{{.State.ExitCode}}', name])).stdout.trim());
  return { killed: running, exitCode };
}

/** Laravel's rules as the panel applies them to a variable's value, for the few rules the egg uses. */
export function ruleProblems(rules: string, value: string): string[] {
  const problems: string[] = [];
  for (const rule of rules.split('|')) {
    const [name, arg = ''] = rule.split(/:(.*)/s) as [string, string?];
    if (name === 'required' && value === '') problems.push('required');
    if (value === '') continue;
    if (name === 'uuid' && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) problems.push('uuid');
    if (name === 'url' && !URL.canParse(value)) problems.push('url');
    if (name === 'integer' && !/^-?\d+$/.test(value)) problems.push('integer');
    if (name === 'max' && value.length > Number(arg)) problems.push(rule);
    if (name === 'in' && !arg.split(',').includes(value)) problems.push(rule);
    if (name === 'between') {
      const [low, high] = arg.split(',').map(Number);
      if (Number(value) < low! || Number(value) > high!) problems.push(rule);
    }
    if (!['required', 'uuid', 'url', 'integer', 'max', 'in', 'between', 'string'].includes(name)) problems.push(`unknown rule ${name}`);
  }
  return problems;
}
