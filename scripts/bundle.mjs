// Bundles the CLI into dist/bundle/ so `porter` starts without resolving and reading hundreds of
// module files: on Node 20 module loading was ~270 ms of a ~380 ms start → first pull.
// Dynamic imports (the demo's simulators, prom-client for /metrics) stay separate chunks and load
// only when used. pino-pretty is left to the installed dependency: it is required only on a TTY.
import { build } from 'esbuild';

await build({
  entryPoints: { porter: 'dist/src/cli/main.js' },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  external: ['pino-pretty'],
  // CommonJS dependencies call require() for Node built-ins; an ES module has no require of its own.
  banner: { js: "import { createRequire as __porterCreateRequire } from 'node:module'; const require = __porterCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  legalComments: 'none',
  // V8 keeps each module's source text for lazy compilation, and a chunk with one non-ASCII
  // character in a comment (undici has some) is kept as two bytes per character: dropping
  // comments and whitespace saves ~3 MB of heap. Names stay, so stack traces still name functions.
  minifyWhitespace: true,
});
