// ESLint (flat config): typescript-eslint's strict type-checked rules over every TypeScript file,
// and the house's layer rule (docs/development.md, "The house"), so that reviews can look at the
// hard things. Every rule turned down below says why.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const throughTheAllocator = 'Only the allocator and src/backend talk to MySQL: go through the allocator.';
const mysqlDriver = [
  { name: 'mysql2', message: throughTheAllocator },
  { name: 'mysql2/promise', message: throughTheAllocator },
];
const backendMysql = ['**/backend/mysql/*', '**/backend/mysql'];
const backendMysqlMessage = 'src/backend/mysql belongs to the allocator, which owns the backends: go through it.';

/**
 * The rooms of src/ (docs/development.md, "The house") and the rooms each may not import: arrows
 * point one way, http → service → cache/allocator → backend, with the composition root (server.ts,
 * index.ts, src/cli) above them all. Folders are matched by name in the import path.
 */
const rooms = {
  http: ['cli', 'migrate', 'launcher', 'server'],
  service: ['http', 'metrics', 'cli', 'migrate', 'launcher', 'server'],
  metrics: ['http', 'cli', 'migrate', 'launcher', 'server'],
  cache: ['allocator', 'backend', 'service', 'http', 'metrics', 'cli', 'migrate', 'launcher', 'server'],
  allocator: ['cache', 'service', 'http', 'metrics', 'config', 'cli', 'migrate', 'launcher', 'server'],
  backend: ['allocator', 'cache', 'service', 'http', 'metrics', 'config', 'cli', 'migrate', 'launcher', 'server'],
  config: ['allocator', 'cache', 'service', 'http', 'metrics', 'cli', 'migrate', 'launcher', 'server'],
  migrate: ['http', 'metrics', 'cli', 'launcher', 'server'],
  launcher: ['allocator', 'cache', 'service', 'http', 'metrics', 'config', 'cli', 'migrate', 'server'],
  cli: [],
};

/** The import patterns that would point an arrow from a room up into one of `above`. */
function upward(room, above) {
  if (above.length === 0) return [];
  return [
    {
      group: above.flatMap((r) => (r === 'server' ? ['**/server.js'] : [`**/${r}/*`, `**/${r}/**/*`])),
      message: `src/${room} stands below these rooms (docs/development.md, "The house"): arrows point one way.`,
    },
  ];
}

/**
 * The layer rule for one room: no arrow up, and who may reach src/backend/mysql. The allocator and
 * src/backend own the backends; above them nobody may. Two rooms talk to MySQL servers that are not
 * ticketd's backends, so they may use one file each and nothing else of it: src/migrate and
 * `ticketd migrate`'s commands read and change the legacy app's own table (no allocator owns it), and
 * src/launcher starts local servers and sets them up as root over their socket before any ticketd
 * backend exists.
 */
function layerRule(room, mysqlAllowed) {
  const own = room === 'allocator' || room === 'backend';
  const mysql = own
    ? []
    : [
        {
          // gitignore rules: a file is let back in only when its folder itself was not shut out.
          group:
            mysqlAllowed === undefined ? backendMysql : ['**/backend/mysql/*', `!**/backend/mysql/${mysqlAllowed}`],
          message: backendMysqlMessage,
        },
      ];
  return ['error', { paths: own ? [] : mysqlDriver, patterns: [...upward(room, rooms[room] ?? []), ...mysql] }];
}

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
      // Express tells an error handler from a route by its four parameters, so its `_next` stays
      // unused; a leading `_` marks such a parameter, and only such a one. A rest pattern's siblings
      // are how an object is copied without some keys.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Node makes the values this rule doubts: Express's req and res are Node's IncomingMessage and
      // ServerResponse (typed by interfaces that extend them), and an HTTPS listener is held as the
      // http.Server it extends. The rule cannot see their constructors, so it refuses them all.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // A resource set in beforeAll is declared as set (`let pair: Pair`), and afterAll closes it with
      // `pair?.stop()`: when beforeAll failed it is undefined after all, and the optional chain keeps
      // its error from being hidden behind a TypeError. The rule reads the declaration and calls the
      // chain unnecessary, in 80 such places.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Fake backends and services implement Promise-returning interfaces with `async` methods that
      // need no await: `async` is what turns their throws into rejections, as the real ones give.
      '@typescript-eslint/require-await': 'off',
      // The fake backend's handle is an object of methods whose own `this` is the handle: `server`
      // names the fake server they all serve (test/support/fake-backend.ts).
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['server'] }],
    },
  },
  {
    // A .cjs file is CommonJS: require is how it imports (examples/sdk/app.cjs shows the client used so).
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // The layer rule, room by room; test/unit/layer-rule-holds.test.ts proves a planted import fails.
  ...Object.keys(rooms).map((room) => ({
    files: [`src/${room}/**/*.ts`],
    rules: { 'no-restricted-imports': layerRule(room) },
  })),
  {
    // The composition root wires every room together, but reaches the backends through the allocator too.
    files: ['src/server.ts', 'src/index.ts', 'src/logger.ts', 'src/paths.ts'],
    rules: { 'no-restricted-imports': layerRule('root') },
  },
  {
    files: ['src/migrate/**/*.ts'],
    rules: { 'no-restricted-imports': layerRule('migrate', 'legacy-table.js') },
  },
  {
    files: ['src/cli/migrate-commands.ts'],
    rules: { 'no-restricted-imports': layerRule('cli', 'legacy-table.js') },
  },
  {
    files: ['src/launcher/**/*.ts'],
    rules: { 'no-restricted-imports': layerRule('launcher', 'socket-admin.js') },
  },
  {
    // The ground floor imports only the ground floor.
    files: ['src/core/**/*.ts', 'src/util/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: mysqlDriver,
          patterns: [
            {
              // gitignore rules: '../*' would shut out the folders themselves, and nothing inside a
              // shut-out folder can be let back in, so files and folders' contents are named apart.
              group: ['../*.js', '../*/**', '!../core/*', '!../util/*'],
              message: 'src/core and src/util are the ground floor: they import only each other.',
            },
          ],
        },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
);
