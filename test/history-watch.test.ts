import { HistoryWatch } from '../core/history-watch';

type Step =
  | ['push']
  | ['read', number | undefined]
  | ['failedRead']
  | ['pushDuringRead', number]
  | ['describe', number, string, string, boolean];

/** Sequences of what a feed saw, and whether each describe (history length, SkillflowStatus, log's status) makes a read. */
const cases: Array<[string, Step[]]> = [
  [
    'nothing described yet, pushes only: the first describe takes the baseline',
    [['push'], ['describe', 10, 'waiting', 'waiting', false], ['describe', 10, 'waiting', 'waiting', false]],
  ],
  [
    'history grew after the baseline with nothing pushed: read',
    [['push'], ['describe', 10, 'running', 'running', false], ['describe', 14, 'waiting', 'running', true]],
  ],
  [
    'history grew, but pushes came: new baseline, no read',
    [['describe', 10, 'running', 'running', false], ['push'], ['describe', 14, 'running', 'running', false]],
  ],
  [
    'pushes came and the status differs from the log: read, once per history length',
    [['push'], ['describe', 14, 'waiting', 'running', true], ['describe', 14, 'waiting', 'running', false]],
  ],
  [
    'a read after a describe covers its history',
    [
      ['read', 10],
      ['describe', 10, 'waiting', 'waiting', false],
      ['describe', 12, 'waiting', 'waiting', true],
    ],
  ],
  [
    'a read with pushes meanwhile covers no known history',
    [
      ['pushDuringRead', 10],
      ['describe', 16, 'waiting', 'waiting', false],
    ],
  ],
  ['a failed read covers nothing', [['push'], ['failedRead'], ['describe', 10, 'running', 'running', false]]],
];

describe('HistoryWatch: reading the log when describe shows pushes went missing', () => {
  it.each(cases)('%s', (_name, steps) => {
    const watch = new HistoryWatch();
    for (const step of steps) {
      if (step[0] === 'describe') {
        expect({ step, read: watch.shouldRead(step[1], step[2], step[3]) }).toEqual({ step, read: step[4] });
        continue;
      }
      if (step[0] === 'push') {
        watch.pushed();
        continue;
      }
      watch.readStarts();
      if (step[0] === 'pushDuringRead') watch.pushed();
      watch.readDone(step[0] === 'failedRead' ? undefined : step[1]);
    }
  });
});
