// The test files of a tier: every `*.test.js` under a folder of dist/test/. The helpers beside
// them (harness.js, fake-clock.js, …) are not tests, though Node 20's `node --test <folder>` ran
// every .js file under the folder as one.
import { readdirSync } from 'node:fs';

/** The test files under `dir`, sorted, as paths that start with `dir`. */
export function testFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir.replace(/\/+$/, '')}/${entry.name}`;
    if (entry.isDirectory()) found.push(...testFiles(path));
    else if (entry.name.endsWith('.test.js')) found.push(path);
  }
  return found.sort();
}
