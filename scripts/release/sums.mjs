// SHA256SUMS in the format `sha256sum -c` reads: the hex digest, two spaces, the file name.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function writeSums(out) {
  const names = readdirSync(out)
    .filter((name) => name !== 'SHA256SUMS' && statSync(join(out, name)).isFile())
    .sort();
  const lines = names.map(
    (name) =>
      `${createHash('sha256')
        .update(readFileSync(join(out, name)))
        .digest('hex')}  ${name}\n`,
  );
  const path = join(out, 'SHA256SUMS');
  writeFileSync(path, lines.join(''));
  return path;
}
