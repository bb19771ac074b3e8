// Every public address of the project, derived from package.json's `repository` (its home is not
// settled: changing that one field moves them all). The release build, the egg, the manifests'
// image and the docs' download lines read them from here; test/ship/urls.test.ts finds no other
// spelling in the tree.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository's web address: `https://github.com/<owner>/<name>`. */
export function repositoryUrl(pkg) {
  const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  const match = /^(?:git\+)?(https:\/\/github\.com\/[\w.-]+\/[\w.-]+?)(?:\.git)?$/.exec(url ?? '');
  if (!match)
    throw new Error(`package.json repository.url ${JSON.stringify(url)} is not https://github.com/<owner>/<name>[.git]: set it there`);
  return match[1];
}

/** Where a version's release artifacts are downloaded from (GitHub releases of the repository). */
export function releaseBaseUrl(pkg, version = pkg.version) {
  return `${repositoryUrl(pkg)}/releases/download/v${version}`;
}

/** The image's name in the repository's container registry (GitHub's ghcr.io, lower case as it requires). */
export function imageName(pkg) {
  const [, owner, name] = /^https:\/\/github\.com\/([^/]+)\/([^/]+)$/.exec(repositoryUrl(pkg));
  return `ghcr.io/${owner}/${name}`.toLowerCase();
}

/** A file of the repository at a ref (a tag for a release, `main` for what is current). */
export function blobUrl(pkg, path, ref = 'main') {
  return `${repositoryUrl(pkg)}/blob/${ref}/${path}`;
}

export function readPackage(file = 'package.json') {
  return JSON.parse(readFileSync(file, 'utf8'));
}

// `node scripts/release/urls.mjs [repository|release|image]` prints them (one, for a workflow step).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pkg = readPackage();
  const all = { repository: repositoryUrl(pkg), release: releaseBaseUrl(pkg), image: imageName(pkg) };
  const which = process.argv[2];
  if (which !== undefined && !(which in all)) throw new Error(`unknown address ${which}: one of ${Object.keys(all).join(', ')}`);
  console.log(which ? all[which] : JSON.stringify(all, null, 2));
}
