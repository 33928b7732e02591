// ESLint (flat config): typescript-eslint's strict type-checked rules over every TypeScript file,
// and the house's layer rule (docs/development.md, "The house"), so that reviews can look at the
// hard things. Every rule turned down below says why.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const mysqlBelowTheAllocator = {
  paths: [
    { name: 'mysql2', message: 'Only the allocator and src/backend talk to MySQL: go through the allocator.' },
    { name: 'mysql2/promise', message: 'Only the allocator and src/backend talk to MySQL: go through the allocator.' },
  ],
  patterns: [
    {
      group: ['**/backend/mysql/*', '**/backend/mysql'],
      message: 'src/backend/mysql belongs to the allocator, which owns the backends: go through it.',
    },
  ],
};

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'dist-bench/',
      'coverage/',
      'packages/client/dist/',
      'bench/results/',
      '.ticketd-dev/',
      '.scratch/',
      'clients/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      // IDs and tickets are bigints and counts are numbers: messages name them by value, as the
      // style guide asks ("backend … has auto_increment_offset=1"). Objects and unknowns stay refused.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `() => void f()` shorthands in callbacks and handlers read plainly; a void value used as a
      // real value is still refused.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // With noUncheckedIndexedAccess on, `xs[i]!` is how an index the loop bounds is spelt; every
      // such place is an index or a map entry the line before proved present.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // The layer rule: nothing above the allocator reaches past it into the MySQL backend.
    files: ['src/http/**/*.ts', 'src/service/**/*.ts', 'src/cache/**/*.ts', 'src/metrics/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', mysqlBelowTheAllocator] },
  },
  {
    // The ground floor imports only the ground floor.
    files: ['src/core/**/*.ts', 'src/util/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          ...mysqlBelowTheAllocator,
          patterns: [
            {
              group: ['../*', '!../core/*', '!../util/*'],
              message: 'src/core and src/util are the ground floor: they import only each other.',
            },
          ],
        },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
);
