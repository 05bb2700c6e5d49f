/**
 * The test files of `npm run test:policy-coverage` (jest.policy-coverage.config.js): the turn policy's and the run
 * machine's table-driven tests. `npm test` runs them there, with coverage, and leaves them out of its unit run
 * (jest.config.js, SKILLFLOW_TEST_COVERED_APART=1), so that each runs once.
 */
const testMatch = ['**/test/policy.test.ts', '**/test/json-validator.test.ts', '**/test/run-*.test.ts'];

/** `testMatch` as path patterns (regular expressions), for testPathIgnorePatterns. */
const testPatterns = testMatch.map(
  (glob) =>
    `${glob
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/^\*\*\//, '/')
      .replace(/\*/g, '[^/]*')}$`,
);

module.exports = { testMatch, testPatterns };
