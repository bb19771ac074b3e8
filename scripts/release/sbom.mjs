// The npm package's SBOM: npm's own CycloneDX document (`npm sbom`), narrowed to the packages the
// bundle actually carries. The published package declares no dependencies (they are inlined),
// so an SBOM of its manifest would list nothing; the repository's tree lists the build tools
// too. esbuild's metafile of the bundle (scripts/bundle.mjs) says which packages are inside.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Package names of every node_modules input of the bundle, e.g. `pino`, `@clack/prompts`. */
export function bundledPackages(metafile) {
  const names = new Set();
  for (const input of Object.keys(JSON.parse(readFileSync(metafile, 'utf8')).inputs)) {
    const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) names.add(match[1]);
  }
  return names;
}

function componentName(component) {
  return component.group ? `${component.group}/${component.name}` : component.name;
}

export function writeSbom(out, pkg, metafile) {
  const inside = bundledPackages(metafile);
  const full = JSON.parse(
    execFileSync('npm', ['sbom', '--sbom-format', 'cyclonedx', '--sbom-type', 'application'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    }),
  );
  // npm marks them development (they are devDependencies of the repository) and names the root
  // after the folder it ran in: in the package they are bundled, and the root is the package.
  const components = full.components
    .filter((c) => inside.has(componentName(c)))
    .map((c) => ({
      ...c,
      properties: [
        ...(c.properties ?? []).filter((p) => p.name !== 'cdx:npm:package:development'),
        { name: 'cdx:npm:package:bundled', value: 'true' },
      ],
    }));
  full.metadata.component.name = pkg.name;
  const kept = new Set([full.metadata.component['bom-ref'], ...components.map((c) => c['bom-ref'])]);
  const sbom = {
    ...full,
    components,
    dependencies: (full.dependencies ?? [])
      .filter((d) => kept.has(d.ref))
      .map((d) => ({ ...d, dependsOn: (d.dependsOn ?? []).filter((ref) => kept.has(ref)) })),
  };
  const missing = [...inside].filter((name) => !components.some((c) => componentName(c) === name));
  if (missing.length > 0) throw new Error(`npm sbom does not list ${missing.join(', ')}, which the bundle carries`);
  const path = join(out, `porter-connector-${pkg.version}.cdx.json`);
  writeFileSync(path, `${JSON.stringify(sbom, null, 2)}\n`);
  return path;
}
