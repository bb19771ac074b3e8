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
      // An abort reason (typed any) or a caught error (unknown) is passed on as it came, the way
      // only-throw-error already lets `throw` do: wrapping it would change what callers receive.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // `const { secret: _secret, ...rest } = x` is how a field is left out of a copy, and a method
      // that ignores an argument of the interface it implements names it `_argument`.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
    },
  },
  {
    // A function reads in one screen (issue: composition roots). The simulators are exempt: each
    // plays a whole server in one closure over its state, as a test double should.
    files: ['src/**/*.ts'],
    ignores: ['src/sim/**'],
    rules: {
      'max-lines-per-function': ['error', { max: 80 }],
      // A thrown string or undefined has no message: the cast hid it and logged `undefined`.
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='message'] > TSAsExpression.object[typeAnnotation.typeName.name='Error']",
          message: 'write messageOf(error) (src/errors.ts): a thrown value that is not an Error has no message',
        },
      ],
    },
  },
  {
    // Each API error class extends a different base (its exit code comes from there), so the
    // problem fields are merged into each one by an interface of the same name and set by
    // assignProblem() in every constructor; the merge is the point, and it is safe here.
    files: ['src/api/errors.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-declaration-merging': 'off',
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    },
  },
  {
    // Fakes implement porter's async interfaces: `async` makes their synchronous throws reject,
    // as the real implementations do, even where the fake itself has nothing to await.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // The build scripts and tool configs are plain JavaScript outside tsconfig: linted without
    // types (disableTypeChecked's parserOptions must survive, so languageOptions is merged).
    files: ['**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', module: 'writable', require: 'readonly' },
    },
  },
);
