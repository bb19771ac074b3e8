// A node:test reporter for scripts/test-unit.mjs: how many tests ran and failed, and how long each
// test file took (the sum of its top-level tests and suites), written once at the end as one JSON
// object. The runner adds up the counts and balances its next run's processes by the times.
export default async function* unitTimes(source) {
  const msByFile = {};
  let tests = 0;
  let failed = 0;
  for await (const { type, data } of source) {
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    if (data.nesting === 0 && data.file) msByFile[data.file] = (msByFile[data.file] ?? 0) + (data.details?.duration_ms ?? 0);
    if (data.details?.type === 'suite') continue;
    tests++;
    if (type === 'test:fail') failed++;
  }
  yield `${JSON.stringify({ tests, failed, msByFile })}\n`;
}
