/**
 * Two projects. `unit`: every test file that needs no Temporal server (jest.projects.js decides by what a file uses).
 * `integration`: the rest, against one real Temporal dev server and one workflow bundle that its global setup starts
 * and builds, only when an integration file is among those that run. `npx jest --selectProjects unit` runs one.
 */
const base = require('./jest.base');
const { classifyTests } = require('./jest.projects');
const policyTests = require('./jest.policy-tests');

const exactly = (file) => `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
const { unit, integration } = classifyTests(__dirname);
/** `npm test` runs the policy tests once, with coverage (jest.policy-tests.js), not again among the unit tests. */
const coveredApart = process.env.SKILLFLOW_TEST_COVERED_APART === '1' ? policyTests.testPatterns : [];

module.exports = {
  // Options of the whole run: jest ignores them in a project's configuration.
  maxWorkers: 2,
  testTimeout: 60_000,
  testSequencer: '<rootDir>/jest.sequencer.js',
  projects: [
    {
      ...base,
      displayName: 'unit',
      testPathIgnorePatterns: [...integration.map(exactly), ...coveredApart],
      setupFiles: ['<rootDir>/jest.unit-setup.js'],
    },
    {
      ...base,
      displayName: 'integration',
      testPathIgnorePatterns: unit.map(exactly),
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
