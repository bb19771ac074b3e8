// The esbuild settings of porter's bundle; the benchmark bundles its dependency-floor process with
// the same ones, so the two are compared like for like.
/** @type {import('esbuild').BuildOptions} */
export const BUNDLE_OPTIONS = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  // CommonJS dependencies call require() for Node built-ins; an ES module has no require of its own.
  banner: {
    js: "import { createRequire as __porterCreateRequire } from 'node:module'; const require = __porterCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  legalComments: 'none',
  // V8 keeps each module's source text for lazy compilation, and a chunk with one non-ASCII
  // character in a comment (undici has some) is kept as two bytes per character: dropping
  // comments and whitespace saves ~3 MB of heap. Names stay, so stack traces still name functions.
  minifyWhitespace: true,
};
