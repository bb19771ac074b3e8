// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * typescript-eslint's recommended-type-checked rules, tuned only where they are wrong for this
 * code (each exception says why). Formatting is prettier's job, not eslint's.
 */
export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    rules: {
      // node:test's describe/test return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', name: ['describe', 'test', 'it', 'suite'], package: 'node:test' }] },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', module: 'writable', require: 'readonly' } },
  },
);
