import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules',
      '**/dist',
      '**/.nx',
      '**/.data',
      '**/jest.config.js',
      'jest.preset.js',
      'bench/**/*.mjs',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    // The scripts under tools/ are JavaScript checked by tools/tsconfig.json (checkJs).
    files: ['tools/**/*.mjs', 'tools/**/*.js'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // A .js file here is CommonJS (package.json's "type"), loaded by Jest with require().
    files: ['tools/**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:management', onlyDependOnLibsWithTags: ['scope:management', 'scope:shared'] },
            { sourceTag: 'scope:capture', onlyDependOnLibsWithTags: ['scope:capture', 'scope:shared'] },
            { sourceTag: 'scope:ingestion', onlyDependOnLibsWithTags: ['scope:ingestion', 'scope:shared'] },
            { sourceTag: 'scope:workers', onlyDependOnLibsWithTags: ['scope:workers', 'scope:shared'] },
            {
              sourceTag: 'scope:standalone',
              onlyDependOnLibsWithTags: [
                'scope:management',
                'scope:capture',
                'scope:ingestion',
                'scope:workers',
                'scope:shared',
              ],
            },
          ],
        },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through the app config (libs/config), not process.env.',
        },
      ],
    },
  },
  {
    files: [
      'libs/config/**/*.ts',
      'libs/test-support/**/*.ts',
      '**/*.spec.ts',
      '**/*-spec.ts',
      '**/test/**/*.ts',
      '**/testing/**/*.ts',
      'bench/**/*.ts',
      'faults/**/*.ts',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.spec.ts', '**/*-spec.ts', '**/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-restricted-properties': [
        'error',
        { object: 'it', property: 'only', message: 'A focused test hides the rest of the suite.' },
        { object: 'describe', property: 'only', message: 'A focused test hides the rest of the suite.' },
      ],
    },
  },
  {
    // Test helpers (a lib's `testing/` entry, `@hogbase/test-support`) are for tests only: production
    // code cannot import them. A separate rule from `no-restricted-imports` below, so both apply.
    files: ['**/*.ts'],
    ignores: [
      '**/*.spec.ts',
      '**/*-spec.ts',
      '**/test/**',
      '**/testing/**',
      'libs/test-support/**',
      'bench/**',
      'faults/**',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(@hogbase/[^/]+|\\.{1,2}(/.*)?)/testing(/.*)?$',
              message: 'Test helpers are importable from tests only (*.spec.ts, *-spec.ts, test/, testing/).',
            },
            {
              group: ['@hogbase/test-support', '@hogbase/test-support/*'],
              message: 'Test helpers are importable from tests only (*.spec.ts, *-spec.ts, test/, testing/).',
            },
          ],
        },
      ],
    },
  },
  {
    // Capture never pulls in the management stack.
    files: ['apps/capture/**/*.ts', 'libs/capture*/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*-spec.ts', '**/test/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@nestjs/*', 'typeorm', '@hogbase/management-api', '@hogbase/postgres'] },
      ],
    },
  },
  prettier,
);
