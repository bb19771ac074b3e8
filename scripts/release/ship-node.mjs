// The Node.js the single executables carry: the current LTS, as the image's node:24-slim. Taken
// from the npm registry's node-linux-<arch> packages (the official builds' files), the one
// registry a release build may reach; npm checks each tarball against the registry's integrity.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SHIP_NODE = '24.22.3';
export const ARCHES = ['x64', 'arm64'];

const CACHE = join('node_modules', '.cache', 'porter-release', `node-${SHIP_NODE}`);

/**
 * The node binary of one architecture, fetched once into node_modules/.cache. `npm pack` rather
 * than `npm install`: the packages declare their cpu, and an install of the arm64 one on x64 is
 * refused (EBADPLATFORM).
 */
export function shipNode(arch) {
  const dir = join(CACHE, arch);
  const binary = join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', dir, `node-linux-${arch}@${SHIP_NODE}`], { encoding: 'utf8' }),
  );
  execFileSync('tar', ['-xzf', join(dir, packed.filename), '-C', dir]);
  if (!existsSync(binary)) throw new Error(`node-linux-${arch}@${SHIP_NODE} has no bin/node: the package's layout changed`);
  return binary;
}

// `node scripts/release/ship-node.mjs [arch]` prints the binary's path: the tests run porter on it.
if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(shipNode(process.argv[2] ?? 'x64'));
