import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';

const DEPS_FLOOR_SOURCE = fileURLToPath(new URL('../deps-floor.js', import.meta.url));

/**
 * bench/deps-floor.ts bundled with porter's own esbuild settings into `dir`: the floor porter's
 * dependencies set, for memory (cpu-memory) and for start-up (startup).
 */
export async function bundleDepsFloor(dir: string): Promise<string> {
  const outfile = join(dir, 'deps-floor.bundle.js');
  const { BUNDLE_OPTIONS } = (await import(new URL('../../../scripts/bundle-options.mjs', import.meta.url).href)) as {
    BUNDLE_OPTIONS: BuildOptions;
  };
  await build({ ...BUNDLE_OPTIONS, entryPoints: [DEPS_FLOOR_SOURCE], outfile, splitting: false, logLevel: 'error' });
  return outfile;
}
