import { RereadQueue } from '../core/reread-queue';

/** A feed told to read, closed, or done reading; or what starts now and how many wait and read after. */
type Step = ['add', string] | ['drop', string] | ['done', string] | ['start', string[], number, number];

const cases: Array<[string, Step[]]> = [
  [
    'starts at most the limit, oldest first',
    [
      ['add', 'a'],
      ['add', 'b'],
      ['add', 'c'],
      ['add', 'd'],
      ['start', ['a', 'b'], 2, 2],
    ],
  ],
  [
    'nothing more starts while the limit is reading',
    [
      ['add', 'a'],
      ['add', 'b'],
      ['add', 'c'],
      ['start', ['a', 'b'], 1, 2],
      ['start', [], 1, 2],
    ],
  ],
  [
    'a read done makes room for the next',
    [
      ['add', 'a'],
      ['add', 'b'],
      ['add', 'c'],
      ['start', ['a', 'b'], 1, 2],
      ['done', 'a'],
      ['start', ['c'], 0, 2],
    ],
  ],
  [
    'a queued feed is not queued twice',
    [
      ['add', 'a'],
      ['add', 'a'],
      ['add', 'b'],
      ['add', 'a'],
      ['start', ['a', 'b'], 0, 2],
    ],
  ],
  [
    'a reading feed told again is not queued now',
    [
      ['add', 'a'],
      ['start', ['a'], 0, 1],
      ['add', 'a'],
      ['add', 'a'],
      ['start', [], 0, 1],
    ],
  ],
  [
    'a reading feed told again reads once more after, behind those waiting',
    [
      ['add', 'a'],
      ['add', 'b'],
      ['start', ['a', 'b'], 0, 2],
      ['add', 'c'],
      ['add', 'a'],
      ['done', 'a'],
      ['start', ['c'], 1, 2],
      ['done', 'b'],
      ['start', ['a'], 0, 2],
      ['done', 'a'],
      ['start', [], 0, 1],
    ],
  ],
  [
    'a feed closed while queued is dropped',
    [
      ['add', 'a'],
      ['add', 'b'],
      ['add', 'c'],
      ['drop', 'b'],
      ['start', ['a', 'c'], 0, 2],
    ],
  ],
  [
    'a feed closed while reading holds its place until done, and is not read again',
    [
      ['add', 'a'],
      ['add', 'b'],
      ['add', 'c'],
      ['start', ['a', 'b'], 1, 2],
      ['add', 'a'],
      ['drop', 'a'],
      ['start', [], 1, 2],
      ['done', 'a'],
      ['start', ['c'], 0, 2],
      ['done', 'b'],
      ['done', 'c'],
      ['start', [], 0, 0],
    ],
  ],
  [
    'done for a feed not reading changes nothing',
    [
      ['add', 'a'],
      ['add', 'b'],
      ['add', 'c'],
      ['start', ['a', 'b'], 1, 2],
      ['done', 'c'],
      ['start', [], 1, 2],
    ],
  ],
  [
    'a feed read before may be queued again',
    [
      ['add', 'a'],
      ['start', ['a'], 0, 1],
      ['done', 'a'],
      ['add', 'a'],
      ['start', ['a'], 0, 1],
    ],
  ],
];

describe('RereadQueue: which feeds read after a reconnect, at most 2 at once', () => {
  it.each(cases)('%s', (_name, steps) => {
    const queue = new RereadQueue(2);
    steps.forEach((step, at) => {
      if (step[0] === 'add') queue.add(step[1]);
      else if (step[0] === 'drop') queue.drop(step[1]);
      else if (step[0] === 'done') queue.done(step[1]);
      else
        expect({ at, started: queue.start(), ...queue.sizes }).toEqual({
          at,
          started: step[1],
          queued: step[2],
          reading: step[3],
        });
    });
  });
});
