import { packageText } from './package-files.js';

let version: string | undefined;

/** The installed package's version: its package.json (beside the bundle, or a single executable's asset). */
export function porterVersion(): string {
  version ??= find();
  return version;
}

function find(): string {
  const text = packageText('package.json');
  if (text === undefined) return 'unknown';
  try {
    const { version: found } = JSON.parse(text) as { version?: unknown };
    return typeof found === 'string' && found !== '' ? found : 'unknown';
  } catch {
    return 'unknown';
  }
}
