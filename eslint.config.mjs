// ESLint: typescript-eslint's type-checked rules that catch real bugs (floating and misused
// promises, unsafe `any`, unused values). Layout is Prettier's (npm run format).
// The `any` that code written before these rules still has is listed in
// eslint-suppressions.json (ESLint's bulk suppressions): new code gets none; fixing old code
// shrinks the list (npm run lint -- --prune-suppressions).
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // dashboard/src/api-types.ts is generated (npm run api-types).
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.ci/cache/**', 'dashboard/public/**', 'dashboard/src/api-types.ts'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', '*.mjs', '*.cjs', 'dashboard/src/*.spec.ts', 'dashboard/src/*/*.spec.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // Nest handlers and adapters are async by contract, with or without an await inside.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests and benchmarks read JSON answers of the gateway and the mocks as `any`: what they assert is the shape.
    files: ['test/**', 'bench/**', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // expect(mock.fn).toHaveBeenCalled() passes methods unbound on purpose.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['dashboard/src/**'],
    languageOptions: { globals: globals.browser },
    // An async event handler is how Preact components act on a click; its promise is not awaited by design.
    rules: { '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }] },
  },
  { files: ['**/*.js', '**/*.cjs', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
