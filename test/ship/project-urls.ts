import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readRepoFile, repoRoot } from './repo.js';

/** The project's public addresses as scripts/release/urls.mjs derives them from package.json (their one home). */
export interface ProjectUrls {
  readonly repository: string;
  readonly releaseBase: string;
  /** The image of this version: `ghcr.io/<owner>/<name>:<version>`. */
  readonly image: string;
  readonly blob: (path: string, ref?: string) => string;
}

interface UrlsModule {
  repositoryUrl(pkg: unknown): string;
  releaseBaseUrl(pkg: unknown): string;
  imageName(pkg: unknown): string;
  blobUrl(pkg: unknown, path: string, ref?: string): string;
}

export async function projectUrls(): Promise<ProjectUrls> {
  const urls = (await import(pathToFileURL(join(repoRoot, 'scripts/release/urls.mjs')).href)) as UrlsModule;
  const pkg = JSON.parse(readRepoFile('package.json')) as { version: string };
  return {
    repository: urls.repositoryUrl(pkg),
    releaseBase: urls.releaseBaseUrl(pkg),
    image: `${urls.imageName(pkg)}:${pkg.version}`,
    blob: (path, ref) => urls.blobUrl(pkg, path, ref),
  };
}
