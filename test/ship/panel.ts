import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDebianBase } from './node-base.js';
import { BUILD_FLAGS, podman } from './podman.js';

/**
 * What a game panel's node daemon (Pterodactyl's Wings, Pelican's fork of it) does with an egg,
 * done here in podman, from their sources:
 * - the install: Wings' server/install.go writes the egg's script to install.sh (CRLF made LF)
 *   and runs `<entrypoint> /mnt/install/install.sh` in the egg's installation container, as
 *   root, with a terminal, the server folder bound at /mnt/server, /tmp a tmpfs, and the
 *   server's environment;
 * - before each start: the egg's configuration files are rewritten from the variables. The
 *   panel turns `{{server.build.env.X}}` into the value and hands each `find` key over unchanged
 *   as the `match` path (pterodactyl/panel app/Services/Eggs/EggConfigurationService.php,
 *   replacePlaceholders). The two daemons then set the paths differently, see `gabsSet` and
 *   `sjsonSet`. Then the server folder is chowned to the daemon's user (server/power.go,
 *   onBeforeStart);
 * - the start: environment/docker/container.go makes a container with a terminal and stdin, the
 *   daemon's uid:gid (988 by default, config/config.go), a read-only root, /tmp a tmpfs,
 *   no-new-privileges, ten capabilities dropped, the folder at /home/container, and the
 *   environment STARTUP (the egg's startup line, `{{X}}` left for the image), TZ,
 *   SERVER_MEMORY, SERVER_IP, SERVER_PORT and the egg's variables;
 * - the image's entrypoint turns the `{{X}}` of STARTUP into values and runs it; the two yolk
 *   projects do that differently, see `YOLKS`;
 * - a stop of type signal (`^SIGINT`) is `docker kill --signal` (environment/docker/power.go,
 *   Stop: SIGABRT, SIGINT and SIGTERM are known, anything else is SIGKILL); Pelican's Wings sends
 *   SIGKILL 10 s later if the container still runs (Terminate).
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

/** The two panels' daemons and the image project each one's community uses. */
export type Panel = 'pelican' | 'pterodactyl';

/**
 * What each yolk project's entrypoint does with STARTUP (the Debian yolks the egg offers; the
 * Node.js ones of each project treat STARTUP the same way):
 * - pelican-eggs/yolks oses/debian/entrypoint.sh (and nodejs/entrypoint.sh), `tini -g` as PID 1:
 *   `echo -e` of the unquoted line, each `{{` made `${` and `}}` made `}` by sed, the result
 *   printed after `:/home/container$ `, then bash `eval`s it: a command of the line runs as a
 *   child of that bash;
 * - pterodactyl/yolks oses/debian/entrypoint.sh (and nodejs/entrypoint.sh), bash as PID 1: the
 *   line with `{{`/`}}` made `${`/`}`, expanded by `eval echo`, printed after
 *   `container@pterodactyl~ `, then `exec env <words>`: no shell runs the line, so a shell word
 *   such as `exec` in it is looked up as a program.
 * Both `cd /home/container` first and export INTERNAL_IP from `ip route get 1`.
 */
export const YOLKS: Record<Panel, { entrypoint: string; containerfile: string; prompt: string }> = {
  pelican: {
    prompt: ':/home/container$ ',
    entrypoint: `#!/bin/bash
cd /home/container
INTERNAL_IP=$(ip route get 1 | awk '{print $(NF-2);exit}')
export INTERNAL_IP
MODIFIED_STARTUP=$(echo -e \${STARTUP} | sed -e 's/{{/\${/g' -e 's/}}/}/g')
echo -e ":/home/container$ \${MODIFIED_STARTUP}"
eval \${MODIFIED_STARTUP}
`,
    containerfile: `USER container
WORKDIR /home/container
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/bin/tini", "-g", "--"]
CMD ["/entrypoint.sh"]
`,
  },
  pterodactyl: {
    prompt: 'container@pterodactyl~ \u001b[0m',
    entrypoint: `#!/bin/bash
TZ=\${TZ:-UTC}
export TZ
INTERNAL_IP=$(ip route get 1 | awk '{print $(NF-2);exit}')
export INTERNAL_IP
cd /home/container || exit 1
PARSED=$(echo "\${STARTUP}" | sed -e 's/{{/\${/g' -e 's/}}/}/g' | eval echo "$(cat -)")
printf "\\033[1m\\033[33mcontainer@pterodactyl~ \\033[0m%s\\n" "$PARSED"
exec env \${PARSED}
`,
    containerfile: `USER container
WORKDIR /home/container
CMD ["/bin/bash", "/entrypoint.sh"]
`,
  },
};

/**
 * What both the yolks and the installer image need on the Debian base with no Node: the same
 * first layer in every build, so podman builds it once. curl and ca-certificates are what
 * pelican-eggs/yolks' installers/debian has for an install script; iproute2 and tini what the
 * yolks' entrypoints call.
 */
const COMMON = `ARG BASE
FROM \${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends iproute2 tini curl ca-certificates && apt-get clean && rm -rf /var/lib/apt/lists/* \\
 && useradd -m -d /home/container container
ENV USER=container HOME=/home/container
`;

async function buildImage(base: string, name: string, containerfile: string, files: Record<string, string> = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'porter-panel-image-'));
  try {
    writeFileSync(join(dir, 'Containerfile'), containerfile);
    for (const [file, text] of Object.entries(files)) {
      writeFileSync(join(dir, file), text);
      chmodSync(join(dir, file), 0o755);
    }
    await podman(['build', ...BUILD_FLAGS, '--build-arg', `BASE=${base}`, '-t', name, '-f', join(dir, 'Containerfile'), dir], {
      timeoutMs: 900_000,
    });
    return name;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A stand-in for a panel's Debian yolk on the given base. */
export function buildYolk(base: string, panel: Panel): Promise<string> {
  const { entrypoint, containerfile } = YOLKS[panel];
  return buildImage(
    base,
    `localhost/porter-test-yolk-${panel}:${base.split(':').at(-1)}`,
    `${COMMON}COPY entrypoint.sh /entrypoint.sh\n${containerfile}`,
    {
      'entrypoint.sh': entrypoint,
    },
  );
}

/** A stand-in for the installers:debian image the egg names (Debian, curl, run as root). */
export function buildInstaller(base: string): Promise<string> {
  return buildImage(base, `localhost/porter-test-installer:${base.split(':').at(-1)}`, COMMON);
}

/** The panel's placeholder replacement: `{{server.build.env.X}}` and `{{env.X}}` become the variable's value. */
function placeholders(value: string, env: Record<string, string>): string {
  return value.replace(/{{(server\.build\.env|env)\.(\w+)}}/g, (_, __: string, name: string) => env[name] ?? '');
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Pterodactyl's Wings (pterodactyl/wings parser/helpers.go, setValueAtPath and getKeyValue; gabs
 * v2.7.0 in its go.mod): a value strconv.Atoi takes is written as a number, else as a string. A
 * path `name[i]` or `name[i].rest` is Wings' own: the array element i (an array made if absent
 * and i is 0), then gabs' SetP of the rest in it. Any other path goes to gabs' SetP as it is:
 * segments split at `.` (`~1` is a dot, `~0` a tilde); an object's missing key becomes an object;
 * in an array a segment must be the index of an existing element (else an error, and Wings keeps
 * the file as it was); anything else in the way is gabs' ErrPathCollision.
 */
export function gabsSet(doc: JsonObject, path: string, raw: string): void {
  const value: Json = /^[+-]?\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : raw;
  const element = /^([^[\]]+)\[(\d+)](\..+)?$/.exec(path);
  if (!element) return gabsSetP(doc, path, value);
  const [, arrayPath, index, rest] = element as unknown as [string, string, string, string | undefined];
  let list = gabsGet(doc, arrayPath);
  if (!Array.isArray(list) || list[Number(index)] === undefined) {
    if (Number(index) !== 0) throw new Error(`gabs: error while parsing array element at path ${path}`);
    list = [rest === undefined ? null : {}];
    gabsSetP(doc, arrayPath, list);
  }
  if (rest === undefined) list[Number(index)] = value;
  else gabsSetP(list[Number(index)] as JsonObject, rest.slice(1), value);
}

const gabsSegments = (path: string) => path.split('.').map((segment) => segment.replace(/~1/g, '.').replace(/~0/g, '~'));

function gabsGet(doc: Json, path: string): Json | undefined {
  let at: Json | undefined = doc;
  for (const segment of gabsSegments(path)) at = Array.isArray(at) ? at[Number(segment)] : isObject(at) ? at[segment] : undefined;
  return at;
}

function gabsSetP(doc: JsonObject, path: string, value: Json): void {
  const segments = gabsSegments(path);
  let at: Json = doc;
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (isObject(at)) {
      if (last) at[segment] = value;
      else at = at[segment] ??= {};
    } else if (Array.isArray(at)) {
      const index = Number(segment);
      if (!/^\d+$/.test(segment) || index >= at.length) throw new Error(`gabs: failed to resolve path segment '${i}' of ${path}`);
      if (last) at[index] = value;
      else if ((at = at[index]!) === null) throw new Error(`gabs: field '${segment}' was not found`);
    } else throw new Error(`gabs: encountered value collision whilst building path ${path}`);
  });
}

/**
 * Pelican's Wings (pelican-dev/wings parser/helpers.go, setValueWithSjson; tidwall/sjson v1.2.5
 * and gjson in its go.mod): sjson paths split at `.` only (`\` escapes), with no `[i]`: `a[0]` is
 * a key of that name. A numeric segment indexes an array (padded with nulls past its end, `-1`
 * appends); a missing key becomes an array if the next segment is numeric, else an object; a
 * non-numeric segment on an array is an error. The value mirrors the type already at the path:
 * a boolean stays a boolean, a number stays a number if the value is one, else a string (so a
 * number lands as a number only where the file already has one).
 */
export function sjsonSet(doc: JsonObject, path: string, raw: string): void {
  const segments = path.split(/(?<!\\)\./).map((segment) => segment.replace(/\\(.)/g, '$1'));
  const numeric = (segment: string | undefined) => segment !== undefined && /^\d+$/.test(segment);
  let at: Json = doc;
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    const fresh = (): Json => (numeric(segments[i + 1]) ? [] : {});
    if (Array.isArray(at)) {
      if (!numeric(segment) && segment !== '-1') throw new Error(`sjson: cannot set array element for non-numeric key '${segment}'`);
      const index = segment === '-1' ? at.length : Number(segment);
      while (at.length < index) at.push(null);
      if (last) at[index] = typed(at[index], raw);
      else at = at[index] ??= fresh();
    } else if (isObject(at)) {
      if (last) at[segment] = typed(at[segment], raw);
      else at = at[segment] ??= fresh();
    } else throw new Error(`sjson: cannot set ${path}`);
  });
}

function typed(existing: Json | undefined, raw: string): Json {
  if (typeof existing === 'boolean' && /^(1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$/.test(raw))
    return /^(1|t|T|TRUE|true|True)$/.test(raw);
  if (typeof existing === 'number' && raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
  return raw;
}

/** The parser each panel's Wings sets configuration paths with. */
export const PARSERS: Record<Panel, (doc: JsonObject, path: string, raw: string) => void> = { pterodactyl: gabsSet, pelican: sjsonSet };

/** gabs writes Go's encoding/json of a map: keys sorted, four spaces (parseJsonFile's BytesIndent). */
const sortedKeys = (value: Json): Json =>
  Array.isArray(value)
    ? value.map(sortedKeys)
    : isObject(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, sortedKeys(value[key]!)]),
        )
      : value;

/** Rewrites the egg's configuration files in `dir` from the variables, as the panel and that panel's Wings do before a start. */
export function applyConfigFiles(egg: Egg, env: Record<string, string>, dir: string, panel: Panel): void {
  const files = JSON.parse(egg.config.files) as Record<string, { parser: string; find: Record<string, string> }>;
  for (const [file, { parser, find }] of Object.entries(files)) {
    if (parser !== 'json') throw new Error(`${file}: only the json parser is done here`);
    const data = JSON.parse(readFileSync(join(dir, file), 'utf8')) as JsonObject;
    for (const [path, template] of Object.entries(find)) PARSERS[panel](data, path, placeholders(template, env));
    // Pelican writes tidwall/pretty's layout (two spaces, keys in their order).
    writeFileSync(join(dir, file), panel === 'pterodactyl' ? JSON.stringify(sortedKeys(data), null, 4) : JSON.stringify(data, null, 2));
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

// `node dist/test/ship/panel.js` makes the installer and both yolks on the bare base ahead of the
// tests (.ci/run), so the egg test spends none of its time limit on their apt-get.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const base = await ensureDebianBase('bare');
  for (const image of [await buildInstaller(base), await buildYolk(base, 'pelican'), await buildYolk(base, 'pterodactyl')])
    process.stdout.write(`${image}\n`);
}
