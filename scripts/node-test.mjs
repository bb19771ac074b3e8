// `node --test` with each folder among its arguments replaced by the test files under it
// (scripts/test-files.mjs), so that every Node from 20.18 on runs the same files. Node 20 reads a
// folder argument as "every .js file under it"; from Node 21 on each argument is a file or a glob,
// a folder is neither, and `node --test dist/test/` failed at once on Node 22 and 24 ("Could not
// find …/dist/test"). A glob would not do either: Node 20 takes none. A list of files every Node
// reads alike. The child is this script's Node (process.execPath), which is the `node` on PATH.
import { statSync } from 'node:fs';
import { passOn } from './pass-on.mjs';
import { testFiles } from './test-files.mjs';

const isFolder = (arg) => !arg.startsWith('-') && statSync(arg, { throwIfNoEntry: false })?.isDirectory() === true;

const args = process.argv.slice(2).flatMap((arg) => {
  if (!isFolder(arg)) return [arg];
  const files = testFiles(arg);
  if (files.length === 0) {
    console.error(`node-test: no *.test.js file under ${arg}: build first (npm run build) or name the right folder`);
    process.exit(64);
  }
  return files;
});

passOn('node-test', process.execPath, ['--test', ...args]);
