import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { startHealthServer, type HealthServer } from '../../src/health/server.js';
import { fakeDaemon, fakeServer, manualClock } from '../health/fakes.js';
import { copies, parseDockerfile, words, type Stage } from './dockerfile.js';
import { PORTER_NODE_FLAGS } from '../../bench/lib/porter-process.js';
import { readRepoFile, repoRoot } from './repo.js';
import { run } from './run.js';

/**
 * The Dockerfile read as a file, three ways: a real linter (dockerfile-utils, the validator behind
 * VS Code's Docker support), the properties a container image must have, and its runtime stage's
 * files against what `npm pack` ships. The HEALTHCHECK command itself is run against a real health
 * endpoint. The image built and run in a container engine: container-image.test.ts.
 */

const text = readRepoFile('Dockerfile');
const { args: globalArgs, stages } = parseDockerfile(text);
const runtime = stages.at(-1)!;
const build = stages.find((s) => s.name === 'build');
const WORKDIR = lastArgs(runtime, 'WORKDIR');

function lastArgs(stage: Stage, keyword: string): string | undefined {
  return stage.instructions.filter((i) => i.keyword === keyword).at(-1)?.args;
}

function all(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

type Diagnostic = { message: string; range: { start: { line: number } } };
type Validate = (content: string, settings?: Record<string, number>) => Diagnostic[];
type Linter = { validate: Validate; ValidationSeverity: { ERROR: number } };

async function loadLinter(): Promise<Linter | string> {
  // Through a variable, so TypeScript does not need the package to compile this file.
  const name = 'dockerfile-utils';
  try {
    const module = (await import(name)) as Partial<Linter> & { default?: Linter };
    return module.validate && module.ValidationSeverity ? (module as Linter) : module.default!;
  } catch {
    const reason = 'dockerfile-utils is not installed (add it to devDependencies)';
    if (process.env.PORTER_REQUIRE_SHIP_TOOLS === '1') throw new Error(`${reason}; CI requires it`);
    return reason;
  }
}

const linter = await loadLinter();

describe('Dockerfile lint (dockerfile-utils)', { skip: typeof linter === 'string' ? linter : false }, () => {
  const { validate, ValidationSeverity } = linter as Linter;
  // Every configurable rule of the linter at error level (some default to ignore).
  const rules = [
    'deprecatedMaintainer',
    'directiveCasing',
    'emptyContinuationLine',
    'instructionCasing',
    'instructionCmdMultiple',
    'instructionEntrypointMultiple',
    'instructionHealthcheckMultiple',
    'instructionJSONInSingleQuotes',
    'instructionWorkdirRelative',
  ];
  const strict = Object.fromEntries(rules.map((rule) => [rule, ValidationSeverity.ERROR]));

  test('reports nothing for the Dockerfile', () => {
    const problems = validate(text, strict).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
    assert.deepEqual(problems, []);
  });

  test('does report a broken Dockerfile (the lint can fail)', () => {
    const broken = 'FROM node:24-alpine\nCMD ["a"]\nCMD [\'b\']\nWORKDIR relative\nEXPOSE http\n';
    const messages = validate(broken, strict).map((d) => d.message);
    assert.ok(
      messages.some((m) => /only be one CMD/.test(m)),
      messages.join('; '),
    );
    assert.ok(messages.some((m) => /single quotes/.test(m)));
    assert.ok(messages.some((m) => /WORKDIR paths should be absolute/.test(m)));
    assert.ok(messages.some((m) => /Invalid containerPort/.test(m)));
  });
});

describe('Dockerfile properties', () => {
  test('multi-stage: a build stage with dev dependencies, a runtime stage that installs nothing', () => {
    assert.ok(stages.length >= 2, 'expected at least two stages');
    assert.ok(build, 'a stage named "build"');
    assert.ok(
      all(build, 'RUN').some((r) => /\bnpm ci\b/.test(r) && !/--omit=dev/.test(r)),
      'build installs dev dependencies',
    );
    assert.ok(
      all(build, 'RUN').some((r) => /\btsc\b|\bnpm run build\b/.test(r)),
      'build compiles (and bundles)',
    );
    // The bundle holds every library (the package depends on nothing): the runtime installs none.
    assert.ok(!all(runtime, 'RUN').some((r) => /\bnpm\b/.test(r)), 'runtime runs no npm');
    assert.ok(!/\bnpm install\b/.test(text), 'npm ci, never npm install: the lock file decides');
  });

  test('an official Debian-based node:*-slim base by default, any Node image through NODE_IMAGE', () => {
    const arg = globalArgs.find((a) => a.keyword === 'ARG' && a.args.startsWith('NODE_IMAGE='));
    const image = arg?.args.split('=')[1] ?? '';
    assert.match(image, /^node:\d+(-[a-z]+)?-slim$/);
    for (const stage of stages) assert.equal(stage.from, '${NODE_IMAGE}');
    assert.doesNotMatch(text, /\bapk\b/, 'Debian: apt-get, not apk');
  });

  test("OCI labels: version (package.json's), revision, source, licenses", () => {
    const pkg = JSON.parse(readRepoFile('package.json')) as { version: string; license: string };
    const args = Object.fromEntries(
      all(runtime, 'ARG').map((a) => [a.split('=')[0]!, a.includes('=') ? a.slice(a.indexOf('=') + 1) : undefined]),
    );
    assert.equal(args.PORTER_VERSION, pkg.version, 'the default version label is the package version');
    const labels = all(runtime, 'LABEL').join(' ');
    for (const [key, value] of [
      ['version', '${PORTER_VERSION}'],
      ['revision', '${PORTER_REVISION}'],
      ['source', '${PORTER_SOURCE}'],
      ['licenses', pkg.license],
    ]) {
      assert.ok(labels.includes(`org.opencontainers.image.${key!}="${value!}"`), `org.opencontainers.image.${key!}`);
    }
  });

  test('npm reads its registry settings from a build secret, never from a file in a layer', () => {
    for (const stage of stages) {
      for (const step of all(stage, 'RUN').filter((r) => /\bnpm ci\b/.test(r))) {
        assert.match(step, /^--mount=type=secret,id=npmrc,target=\/root\/\.npmrc /, step);
      }
      for (const copy of copies(stage)) assert.ok(!copy.sources.some((s) => /npmrc/.test(s)), 'no npmrc copied');
    }
  });

  test('runs as a non-root user, under tini, with an exec-form ENTRYPOINT/CMD and STOPSIGNAL SIGTERM', () => {
    const user = lastArgs(runtime, 'USER');
    assert.ok(user && !/^(root|0)(:|$)/.test(user), `USER ${user}`);
    assert.ok(all(runtime, 'RUN').some((r) => /apt-get install -y --no-install-recommends [^&]*\btini\b/.test(r)));
    const entrypoint = lastArgs(runtime, 'ENTRYPOINT') ?? '';
    const cmd = lastArgs(runtime, 'CMD') ?? '';
    assert.ok(entrypoint.startsWith('[') && cmd.startsWith('['), 'exec (JSON) form');
    const entry = JSON.parse(entrypoint) as string[];
    assert.deepEqual(entry.slice(0, 2), ['/usr/bin/tini', '--'], "Debian's tini");
    assert.equal(entry[2], 'node');
    // The same node flags as the built bin's shebang, which is what `porter` runs with everywhere else.
    const flags = PORTER_NODE_FLAGS;
    assert.ok(flags.length > 0, 'the bin names its node flags in its shebang');
    assert.deepEqual(entry.slice(3, 3 + flags.length), flags, "the ENTRYPOINT passes the shebang's node flags");
    assert.equal(entry[3 + flags.length], `${WORKDIR}/dist/bundle/porter.js`);
    assert.deepEqual(JSON.parse(cmd), ['run']);
    assert.equal(lastArgs(runtime, 'STOPSIGNAL'), 'SIGTERM');
  });

  test('config and state: PORTER_CONFIG at /etc/porter, the journal on a volume the user owns', () => {
    assert.ok(all(runtime, 'ENV').includes('PORTER_CONFIG=/etc/porter/config.json'));
    assert.deepEqual(JSON.parse(lastArgs(runtime, 'VOLUME') ?? '[]'), ['/var/lib/porter']);
    assert.ok(all(runtime, 'RUN').some((r) => /chown node:node \/var\/lib\/porter/.test(r)));
    for (const env of all(runtime, 'ENV')) assert.doesNotMatch(env, /TOKEN|PASSWORD/i, 'no secrets baked into the image');
    assert.equal(all(runtime, 'ADD').length + (build ? all(build, 'ADD').length : 0), 0, 'COPY, not ADD');
  });

  test('HEALTHCHECK is exec form and needs no curl or wget', () => {
    const health = lastArgs(runtime, 'HEALTHCHECK') ?? '';
    const { flags, words: parts } = words(health);
    assert.equal(parts[0], 'CMD');
    assert.ok(flags.interval && flags.timeout, 'interval and timeout set');
    assert.doesNotMatch(health, /\b(curl|wget)\b/);
  });
});

describe('HEALTHCHECK against a real /healthz', () => {
  const clock = manualClock();
  const survival = fakeServer('1b4e28ba-2fa1-11d2-883f-0016d3cca427', 'survival');
  let dir = '';
  let health: HealthServer;
  const command = words(
    words(lastArgs(runtime, 'HEALTHCHECK') ?? '')
      .words.slice(1)
      .join(' '),
  ).words;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'porter-hc-'));
    health = await startHealthServer({
      listen: '127.0.0.1:0',
      daemon: fakeDaemon([survival.part], dir),
      logger: pino({ level: 'silent' }),
      clock,
    });
  });
  after(async () => {
    await health.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const probe = (port: number) =>
    run(process.execPath, command.slice(1), { env: { ...process.env, PORTER_HEALTH_PORT: String(port) }, timeoutMs: 20_000 });

  test('exits 0 while porter is healthy', async () => {
    survival.state.connected = true;
    assert.equal(command[0], 'node');
    assert.equal((await probe(health.port)).code, 0);
  });

  test('exits 1 on a 503', async () => {
    survival.state.connected = false;
    assert.equal((await probe(health.port)).code, 1);
  });

  test('exits 1 when nothing listens', async () => {
    const closed = await startHealthServer({
      listen: '127.0.0.1:0',
      daemon: fakeDaemon([], dir),
      logger: pino({ level: 'silent' }),
      clock,
    });
    const port = closed.port;
    await closed.close();
    assert.equal((await probe(port)).code, 1);
  });
});

describe('the runtime stage ships what npm pack ships', () => {
  /** Paths (relative to the package folder) the runtime stage puts in the image. */
  function imagePaths(): Map<string, { line: number; fromContext: string | undefined }> {
    assert.ok(WORKDIR, 'runtime stage sets WORKDIR');
    const buildWorkdir = build ? lastArgs(build, 'WORKDIR') : undefined;
    const paths = new Map<string, { line: number; fromContext: string | undefined }>();
    for (const copy of copies(runtime)) {
      assert.ok(copy.dest.startsWith(`${WORKDIR}/`) || copy.dest === `${WORKDIR}/`, `COPY on line ${copy.line} writes outside ${WORKDIR}`);
      const rel = copy.dest.slice(WORKDIR.length + 1);
      for (const source of copy.sources) {
        const target: string = copy.dest.endsWith('/') ? `${rel}${basename(source)}` : rel.replace(/\/$/, '');
        if (copy.from !== undefined) {
          assert.equal(copy.from, 'build', `line ${copy.line}: files come from the build stage`);
          assert.equal(source, `${buildWorkdir}/${target}`, `line ${copy.line}: copies ${source} to ${target}, not the same path`);
        }
        paths.set(target, { line: copy.line, fromContext: copy.from === undefined ? source : undefined });
      }
    }
    return paths;
  }

  /** Needed to install, not shipped by npm pack: nothing, since the package depends on nothing. */
  const installOnly = new Set<string>();
  /** npm adds these whenever they exist; they are documentation, not needed at run time. */
  const docs = /^(README|LICEN[CS]E|CHANGELOG)(\..*)?$/i;

  let packed: string[] = [];
  before(async () => {
    const result = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, timeoutMs: 120_000 });
    assert.equal(result.code, 0, result.stderr);
    packed = (JSON.parse(result.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  });

  test('every file npm pack ships is copied into the runtime image', () => {
    const paths = [...imagePaths().keys()];
    const missing = packed.filter((file) => !docs.test(file) && !paths.some((p) => file === p || file.startsWith(`${p}/`)));
    assert.deepEqual(missing, [], 'npm pack ships these but the runtime stage does not copy them');
    assert.ok(packed.includes('dist/bundle/porter.js'), 'npm pack ships the CLI (is dist built?)');
  });

  test('the runtime image copies nothing npm pack would not ship', () => {
    const extra = [...imagePaths().keys()].filter(
      (p) => !installOnly.has(p) && !packed.some((file) => file === p || file.startsWith(`${p}/`)),
    );
    assert.deepEqual(extra, [], 'the runtime stage copies these but npm pack does not ship them');
  });

  test('.dockerignore is an allow-list that lets in exactly what the stages copy from the context', () => {
    const rules = readRepoFile('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    assert.equal(rules[0], '*', 'starts by excluding everything');
    const allowed = rules.filter((r) => r.startsWith('!')).map((r) => r.slice(1).replace(/\/$/, ''));
    const fromContext = new Set<string>();
    for (const stage of stages)
      for (const copy of copies(stage)) if (copy.from === undefined) copy.sources.forEach((s) => fromContext.add(s));
    assert.deepEqual([...fromContext].sort(), [...allowed].sort());
    for (const secret of ['api-token', 'rcon-password', 'state', 'node_modules', '.git', 'dist']) {
      assert.ok(!allowed.includes(secret), `${secret} must stay out of the build context`);
    }
  });
});
