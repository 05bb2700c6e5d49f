/** Jest's own order (failed last time first, then the longest first), with the unit project's files before the rest. */
const Sequencer = require('@jest/test-sequencer').default;

class UnitFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const isUnit = (test) => test.context.config.displayName?.name === 'unit';
    return [...sorted.filter(isUnit), ...sorted.filter((test) => !isUnit(test))];
  }
}

module.exports = UnitFirst;
