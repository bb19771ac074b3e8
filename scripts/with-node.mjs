// `node scripts/with-node.mjs 24 npm run test:integration`: runs a command with another major of
// Node first on PATH, so that npm, the scripts it runs, `node --test` and every process a test
// starts (they spawn process.execPath) are that Node. CI runs the unit and integration tiers this
// way on Node 24, the Node the image ships (docs/contributing.md#build-test-benchmark).
//
// That Node is the registry's `node-<platform>-<arch>` package (the official build's files, no
// install script), installed once into node_modules/.cache/porter/node-<version>/ and reused until
// the next `npm ci` empties node_modules. It is not a devDependency: the package is 30 MB and
// built for one platform, and each contributor, each CI machine, needs another.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import { passOn } from './pass-on.mjs';
import { SHIP_NODE } from './release/ship-node.mjs';

const [major, command, ...args] = process.argv.slice(2);
if (!/^\d+$/.test(major ?? '') || command === undefined) {
  console.error('usage: node scripts/with-node.mjs <major> <command> [args…], e.g. node scripts/with-node.mjs 24 npm run test:unit');
  process.exit(64);
}

const pkg = `node-${process.platform}-${process.arch}`;
// The major the release ships is tested at exactly the version it ships (scripts/release/ship-node.mjs).
const wanted = SHIP_NODE.startsWith(`${major}.`) ? SHIP_NODE : major;
const home = resolve('node_modules/.cache/porter', `node-${wanted}`);
const bin = resolve(home, 'node_modules', pkg, 'bin');

if (!existsSync(resolve(bin, 'node'))) {
  console.log(`with-node: installing ${pkg}@${wanted} from the npm registry into ${home}`);
  const install = ['install', '--prefix', home, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `${pkg}@${wanted}`];
  const installed = spawnSync('npm', install, { stdio: 'inherit' });
  if (installed.status !== 0) {
    console.error(
      `with-node: npm could not install ${pkg}@${wanted}: see npm's message above (is the registry reachable, and is there a build for ${process.platform}/${process.arch}?)`,
    );
    process.exit(1);
  }
}

// Found by PATH as the command will find it: an older Node earlier on PATH would win otherwise.
const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
const version = spawnSync('node', ['-p', 'process.version'], { env, encoding: 'utf8' }).stdout?.trim() ?? '';
if (!version.startsWith(`v${wanted}${wanted === major ? '.' : ''}`)) {
  console.error(
    `with-node: node on PATH is ${version || 'missing'}, not Node ${wanted}: remove ${home} and run again to install it afresh`,
  );
  process.exit(1);
}
console.log(`with-node: ${command} ${args.join(' ')} on Node ${version} (${bin})`);

passOn('with-node', command, args, env);
