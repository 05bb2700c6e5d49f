import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'readline',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      '.cache/**',
      'dist/**',
      'packages/*/dist/**',
      'web/dist/**',
      'coverage/**',
      'test/fixtures/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['bin/**/*.js', '*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['web/src/**/*.{ts,tsx}'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.flatMap((name) =>
            [name, `node:${name}`].map((n) => ({
              name: n,
              message: 'The web app runs in the browser: no Node built-ins.',
            })),
          ),
          patterns: [
            {
              group: [
                '**/api/**',
                '**/worker/**',
                '**/activities/**',
                '**/workflows/**',
                '**/lib/**',
                '!**/lib/client',
                '!**/lib/client/**',
              ],
              message:
                "The web app talks to the API: it imports the client (lib/client) and core's shapes, nothing else of the server.",
            },
          ],
        },
      ],
    },
  },
  {
    // core/ has its own, stricter block below (a later block's options replace an earlier one's for the same rule).
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.flatMap((name) => [
            { name, message: 'Workflow and core code must stay deterministic: no Node built-ins.' },
            { name: `node:${name}`, message: 'Workflow and core code must stay deterministic: no Node built-ins.' },
          ]),
          patterns: [
            {
              group: ['**/activities', '**/activities/**'],
              message: 'Workflows call activities through proxyActivities with `import type` only.',
              allowTypeImports: true,
            },
            {
              group: ['**/api/**', '**/worker/**', '**/lib/**'],
              message: 'Workflow and core code must not import Node-side modules.',
            },
            {
              group: ['@anthropic-ai/sdk', '@anthropic-ai/sdk/**'],
              message: 'Workflows never call the model: the model activity does (activities/model.ts).',
            },
            {
              group: [
                '@temporalio/client',
                '@temporalio/client/**',
                '@temporalio/worker',
                '@temporalio/worker/**',
                '@temporalio/testing',
              ],
              message:
                'Workflow code runs in the sandbox: @temporalio/workflow only (child workflows, signals and handles are there).',
            },
            {
              group: ['@temporalio/activity', '@temporalio/activity/**'],
              message: 'Activity context belongs to activities/: workflows call them through proxyActivities.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['api/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/activities', '**/activities/**', '**/worker/**'],
              message: 'The API talks to Temporal only: no activities or worker code.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/workflows', '**/workflows/**'],
              message: 'lib/ must not import workflows/: put shared names in core/.',
            },
            {
              group: ['**/activities', '**/activities/**', '**/worker/**'],
              message: 'lib/ is shared by every process: no activities or worker code.',
            },
            {
              regex: '^(\\.\\./)+api(/|$)',
              message: "lib/ must not import api/: the protocol's shapes are in core/protocol/.",
            },
          ],
        },
      ],
    },
  },
  {
    // workflows/legacy/core/ is the frozen copy of core/ the legacy workflows run on (workflows/legacy/README.md).
    files: ['core/**/*.ts', 'workflows/legacy/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.flatMap((name) =>
            [name, `node:${name}`].map((n) => ({ name: n, message: 'core/ is pure logic: no Node built-ins.' })),
          ),
          patterns: [
            { group: ['@temporalio/*'], message: 'core/ is pure logic: no Temporal imports.' },
            {
              group: ['**/activities', '**/activities/**', '**/api/**', '**/worker/**', '**/lib/**', '**/workflows/**'],
              message: 'core/ depends on nothing in the project but core/.',
            },
          ],
        },
      ],
    },
  },
);
