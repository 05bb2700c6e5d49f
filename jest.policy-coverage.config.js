/**
 * `npm run test:policy-coverage`: the turn policy's and the run machine's table-driven tests, which must cover every
 * branch, line and function of core/policy/, core/run/ and the validator and checkpoint rules they use. No Temporal
 * server needed.
 */
const base = require('./jest.base');
const { testMatch } = require('./jest.policy-tests');

module.exports = {
  ...base,
  testTimeout: 60_000,
  testMatch,
  collectCoverage: true,
  coverageProvider: 'v8',
  coverageDirectory: 'coverage/policy',
  collectCoverageFrom: ['core/policy/**/*.ts', 'core/run/**/*.ts', 'core/json-validator.ts', 'core/checkpoints.ts'],
  coverageThreshold: { global: { branches: 100, functions: 100, lines: 100, statements: 100 } },
};
