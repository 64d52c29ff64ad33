// ESLint: typescript-eslint's recommended rules with type information, over everything tsc
// checks (tsconfig.json's include). Run by `npm run lint` with Prettier, and by CI.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Generated code is the generator's business; build output and reports are not ours to lint. The
  // example app has its own dependencies, which the gateway's install does not bring: its own tsc
  // checks it (`.ci/run`), and Prettier here.
  {
    ignores: [
      'dist/',
      'coverage/',
      'test-results/',
      'bench/.out/',
      'src/__generated__/',
      '.perf/',
      'eslint.config.js',
      'examples/app/',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise that passes on what its source rejected with rejects with the same unknown value.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // `const { http: _http, ...rest } = extensions` drops a key on purpose: the name says so.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // vitest types its asymmetric matchers (expect.any, expect.objectContaining, ...) as any,
      // and tests put them in the objects they compare against.
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
);
