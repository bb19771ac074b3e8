import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { openFilesNeed, openFilesWarning } from '../../src/daemon/open-files-need.js';
import { readRepoFile } from './repo.js';
import { makeUnitRoot } from './unit-root.js';
import { missingTool, run } from './run.js';

/**
 * The shipped unit is checked by systemd itself: `systemd-analyze verify` must print nothing,
 * and `systemd-analyze security --offline` must score no worse than the docs say. systemd looks
 * for ExecStart's program on the real file system, so both run against a throw-away root that
 * holds the unit, systemd's own units (for the targets it names) and a stand-in
 * /usr/local/bin/porter; test/ship/pack.test.ts repeats verify with the real `npm i -g` install.
 */

const unitText = readRepoFile('systemd/porter.service');

function directives(text: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('[')) continue;
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    map.set(key, [...(map.get(key) ?? []), line.slice(eq + 1)]);
  }
  return map;
}

function seconds(value: string): number {
  const match = /^(\d+)\s*(ms|s|sec|min|m)?$/.exec(value.trim());
  assert.ok(match, `cannot read the time span "${value}"`);
  const n = Number(match[1]);
  const unit = match[2] ?? 's';
  return unit === 'ms' ? n / 1000 : unit === 'min' || unit === 'm' ? n * 60 : n;
}

const skip = missingTool('systemd-analyze', 'apt-get install systemd');

describe('systemd/porter.service', { skip }, () => {
  const roots: string[] = [];
  let root = '';
  before(() => {
    root = makeUnitRoot('stub');
    roots.push(root);
  });
  after(() => {
    for (const dir of roots) rmSync(dir, { recursive: true, force: true });
  });

  test('systemd-analyze verify prints nothing and exits 0', async () => {
    const result = await run('systemd-analyze', ['verify', `--root=${root}`, 'porter.service'], { timeoutMs: 30_000 });
    assert.equal(`${result.stdout}${result.stderr}`, '', 'systemd-analyze verify printed warnings');
    assert.equal(result.code, 0);
  });

  test('verify does complain when ExecStart points at nothing (the check can fail)', async () => {
    const bare = makeUnitRoot('absent');
    roots.push(bare);
    const result = await run('systemd-analyze', ['verify', `--root=${bare}`, 'porter.service'], { timeoutMs: 30_000 });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /\/usr\/local\/bin\/porter/);
  });

  test('security --offline scores what docs/install.md reports', async (t) => {
    const result = await run('systemd-analyze', ['security', '--offline=true', `--root=${root}`, 'porter.service'], { timeoutMs: 30_000 });
    const match = /Overall exposure level for porter\.service: (\d+\.\d+) (\S+)/.exec(result.stdout);
    assert.ok(match, `no exposure level in:\n${result.stdout}${result.stderr}`);
    t.diagnostic(`systemd-analyze security exposure: ${match[1]} ${match[2]}`);
    const documented = /exposure level (\d+\.\d+)/.exec(readRepoFile('docs/install.md'));
    assert.ok(documented, 'docs/install.md must state the exposure level');
    assert.equal(match[1], documented[1], 'docs/install.md states a different exposure level: update it');
    assert.ok(Number(match[1]) <= 2, `exposure ${match[1]} is above 2.0: hardening was lost`);
  });

  test('has the directives a hardened service needs', () => {
    const d = directives(unitText);
    const one = (key: string) => d.get(key)?.at(-1);
    assert.match(one('Type') ?? '', /^(simple|exec)$/);
    assert.equal(one('DynamicUser'), 'yes');
    assert.equal(one('StateDirectory'), 'porter');
    assert.equal(one('ConfigurationDirectory'), 'porter');
    assert.ok(d.get('LoadCredential')?.some((v) => v.startsWith('porter-api-token:')));
    assert.equal(one('Restart'), 'on-failure');
    assert.equal(one('RestartPreventExitStatus'), '78 64');
    for (const key of ['NoNewPrivileges', 'PrivateTmp', 'PrivateDevices']) assert.equal(one(key), 'yes', key);
    assert.equal(one('ProtectSystem'), 'strict');
    assert.match(one('ProtectHome') ?? '', /^(yes|read-only|tmpfs)$/);
    assert.equal(one('RestrictAddressFamilies'), 'AF_INET AF_INET6 AF_UNIX');
    assert.equal(d.get('SystemCallFilter')?.[0]?.split(' ')[0], '@system-service');
    assert.equal(one('CapabilityBoundingSet'), '');
    assert.equal(one('MemoryDenyWriteExecute'), 'no', 'V8 needs W+X pages: see test/ship/mdwe.test.ts');
    assert.match(one('ExecStart') ?? '', /^\/usr\/local\/bin\/porter run --config \/etc\/porter\/config\.json$/);
    assert.equal(one('ExecReload'), '/bin/kill -HUP $MAINPID', '`systemctl reload porter` must reach porter as SIGHUP');
  });

  test("Documentation= names porter's own docs, at the path npm installs them", () => {
    const uris = (directives(unitText).get('Documentation') ?? []).flatMap((value) => value.split(/\s+/));
    assert.ok(
      uris.some((uri) => uri.endsWith('/docs/troubleshooting.md')),
      uris.join(' '),
    );
    const { files: shipped, name: packageName } = JSON.parse(readRepoFile('package.json')) as { files: string[]; name: string };
    for (const uri of uris) {
      const path = new RegExp(`^file:/usr/local/lib/node_modules/${packageName}/(.+)$`).exec(uri)?.[1];
      assert.ok(path, `${uri} is not a file of the installed package`);
      assert.ok(readRepoFile(path).length > 0, `${path} is in the repository`);
      // npm always packs README.md; anything else must be in "files".
      assert.ok(path === 'README.md' || shipped.some((entry) => path === entry || path.startsWith(`${entry}/`)), `${path} is shipped`);
    }
  });

  test("TimeoutStopSec leaves room beyond porter's own drain bound", () => {
    const drainMs = configSchema.parse({
      api: { baseUrl: 'https://seller.example.com' },
      servers: [{ id: '1b4e28ba-2fa1-11d2-883f-0016d3cca427', executor: { type: 'rcon' } }],
    }).shutdown.drainMs;
    const stop = directives(unitText).get('TimeoutStopSec')?.at(-1);
    assert.ok(stop, 'TimeoutStopSec is not set');
    assert.ok(seconds(stop) >= drainMs / 1000 + 5, `TimeoutStopSec=${stop} is not at least drainMs (${drainMs} ms) + 5 s`);
  });
});

describe('open files', () => {
  test('LimitNOFILE= leaves room for 1,000 servers (systemd would give 1,024, too few)', async () => {
    const value = directives(unitText).get('LimitNOFILE')?.at(-1);
    assert.ok(value, 'LimitNOFILE is not set: systemd gives a service a soft limit of 1,024 open files');
    const parts = value.split(':').map(Number);
    const hard = parts.at(-1) ?? Number.NaN;
    assert.ok(parts.every(Number.isInteger), `cannot read LimitNOFILE=${value}`);
    const servers = Array.from({ length: 1000 }, (_, i) => ({
      id: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
      executor: { type: 'rcon', password: 'a-long-rcon-password' },
    }));
    const config = await parseConfig({ api: { baseUrl: 'https://seller.example.com', token: 'gci_x' }, servers }, '/etc/porter', {});
    // node raises the soft limit to the hard one at start, so the hard one is what porter gets.
    const limit = { soft: hard, hard };
    assert.equal(openFilesWarning(config, limit), undefined, `1,000 servers do not fit in LimitNOFILE=${value}`);
    assert.ok(openFilesNeed(config, limit).total > 1024, 'the check must be able to fail: 1,000 servers need more than 1,024');
  });
});

describe('the credentials the unit loads are the ones porter reads', () => {
  test("the guide's config holds no secret: porter-api-token and porter-rcon-password come from $CREDENTIALS_DIRECTORY", async () => {
    const creds = mkdtempSync(join(tmpdir(), 'porter-creds-'));
    try {
      writeFileSync(join(creds, 'porter-api-token'), 'gci_from_credentials_dir\n');
      writeFileSync(join(creds, 'porter-rcon-password'), 'rcon-from-credentials\n');
      for (const line of directives(unitText).get('LoadCredential') ?? []) {
        assert.ok(['porter-api-token', 'porter-rcon-password'].includes(line.split(':')[0]!), `unexpected credential ${line}`);
      }
      // docs/examples/config.systemd.json is what the install guide puts in /etc/porter/config.json.
      const example = JSON.parse(readRepoFile('docs/examples/config.systemd.json')) as unknown;
      const config = await parseConfig(example, '/etc/porter', { CREDENTIALS_DIRECTORY: creds });
      assert.equal(config.stateDir, '/var/lib/porter', 'the journal goes to StateDirectory=porter');
      assert.equal(config.api.token, 'gci_from_credentials_dir');
      const executor = config.servers[0]!.executor;
      assert.ok('password' in executor);
      assert.equal(executor.password, 'rcon-from-credentials');
    } finally {
      rmSync(creds, { recursive: true, force: true });
    }
  });
});
