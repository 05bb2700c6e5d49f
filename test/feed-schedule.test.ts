import { FeedSchedule, type FeedStep, type FeedTimings } from '../core/feed-schedule';

const timings: FeedTimings = {
  silentReadMs: 15_000,
  minPollMs: 500,
  maxPollMs: 2_000,
  describeEveryMs: 3_000,
  pokeReadMs: 1_000,
};

/** At a time (ms since the feed started): something heard, pushes known to arrive, a poke, a read done (events found,
 * another wanted), or the next step and what it must be. */
type Step =
  | ['heard', number]
  | ['pushesArrive', number]
  | ['poke', number]
  | ['afterRead', number, number, boolean]
  | ['next', number, FeedStep];

const read: FeedStep = { kind: 'read' };
const describe_: FeedStep = { kind: 'describe' };
const sleep = (ms: number): FeedStep => ({ kind: 'sleep', ms });

const cases: Array<[string, Step[]]> = [
  ['a new feed reads at once', [['next', 0, read]]],
  [
    'without pushes it polls: 0.5 s after a read that found events',
    [
      ['afterRead', 0, 3, false],
      ['next', 100, sleep(400)],
      ['next', 500, read],
    ],
  ],
  [
    'reads that find nothing back off by half, up to 2 s (describes aside)',
    [
      ['afterRead', 0, 0, false],
      ['next', 0, sleep(750)],
      ['afterRead', 750, 0, false],
      ['next', 750, sleep(1125)],
      ['afterRead', 2000, 0, false],
      ['afterRead', 4000, 0, false],
      ['heard', 4000],
      ['next', 4000, sleep(2000)],
    ],
  ],
  [
    'a read that wants another polls fast again',
    [
      ['afterRead', 0, 0, false],
      ['afterRead', 1000, 0, true],
      ['next', 1000, sleep(500)],
    ],
  ],
  [
    'once pushes arrive, the next read is after 15 s of silence, and describes come every 3 s meanwhile',
    [
      ['pushesArrive', 0],
      ['afterRead', 0, 5, false],
      ['next', 2999, sleep(1)],
      ['next', 3000, describe_],
      ['next', 3000, sleep(3000)],
      ['next', 6000, describe_],
      ['next', 15_000, read],
    ],
  ],
  [
    'anything heard puts the describe off',
    [
      ['pushesArrive', 0],
      ['afterRead', 0, 1, false],
      ['heard', 2000],
      ['next', 3000, sleep(2000)],
      ['next', 5000, describe_],
    ],
  ],
  [
    'a poke with pushes arriving reads within 1 s (unless they bring it first)',
    [
      ['pushesArrive', 0],
      ['afterRead', 0, 1, false],
      ['heard', 9000],
      ['poke', 9000],
      ['next', 9000, sleep(1000)],
      ['next', 10_000, read],
    ],
  ],
  [
    'a poke without pushes reads now, and polls fast after',
    [
      ['afterRead', 0, 0, false],
      ['afterRead', 750, 0, false],
      ['poke', 800],
      ['next', 800, read],
      ['afterRead', 800, 0, false],
      ['next', 800, sleep(750)],
    ],
  ],
  [
    'a poke never puts a read off',
    [
      ['pushesArrive', 0],
      ['afterRead', 0, 1, false],
      ['heard', 14_500],
      ['poke', 14_500],
      ['next', 15_000, read],
    ],
  ],
];

describe('FeedSchedule: when a feed reads its log and describes its turn', () => {
  it.each(cases)('%s', (_name, steps) => {
    const schedule = new FeedSchedule(timings, 0);
    for (const step of steps) {
      if (step[0] === 'heard') schedule.heard(step[1]);
      else if (step[0] === 'pushesArrive') schedule.pushesArrive(step[1]);
      else if (step[0] === 'poke') schedule.poke(step[1]);
      else if (step[0] === 'afterRead') schedule.afterRead(step[2], step[3], step[1]);
      else expect({ at: step[1], step: schedule.next(step[1]) }).toEqual({ at: step[1], step: step[2] });
    }
  });

  it('says whether pushes reach the feed', () => {
    const schedule = new FeedSchedule(timings, 0);
    expect(schedule.pushed).toBe(false);
    schedule.pushesArrive(10);
    expect(schedule.pushed).toBe(true);
  });
});
