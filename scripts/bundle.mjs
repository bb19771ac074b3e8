// Bundles the CLI into dist/bundle/ so `porter` starts without resolving and reading hundreds of
// module files: on Node 20 module loading was ~270 ms of a ~380 ms start → first pull.
// Dynamic imports (the demo's simulators, prom-client for /metrics, and each transport's executor,
// src/protocols/executor-registry.ts) stay separate chunks and load only when used: a daemon whose servers
// all speak RCON never reads the WebRCON, telnet, BattlEye, TShock or script code, and pino-pretty
// is read only on a TTY. Every dependency is inlined, so the npm package depends on nothing.
import { writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { BUNDLE_OPTIONS } from './bundle-options.mjs';

const { metafile } = await build({
  ...BUNDLE_OPTIONS,
  entryPoints: { porter: 'dist/src/cli/main.js' },
  outdir: 'dist/bundle',
  metafile: true,
});
// Which packages the bundle carries, for the release's SBOM (scripts/release/sbom.mjs).
writeFileSync('dist/bundle-meta.json', JSON.stringify(metafile));
