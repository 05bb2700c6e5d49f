import type { TurnEvent } from '../core/events';
import { FeedLog } from '../core/feed-log';

const at = '2026-01-01T00:00:00.000Z';
const status = (offset: number, value = 'running'): TurnEvent =>
  ({ type: 'status', status: value, offset, at }) as TurnEvent;
const done = (offset: number, output = 'ok'): TurnEvent => ({ type: 'done', output, offset, at }) as TurnEvent;

/** `push` and `read` an event (pushed: not durable; read from the log: durable); `confirm` (describe shows the
 * workflow closed); `readOver` (a read that began while the ending `pending` then waited ended). */
type Step = ['push', TurnEvent] | ['read', TurnEvent] | ['confirm'] | ['readOver', number];

interface Outcome {
  /** Offsets the copy holds. */
  log: number[];
  /** Offset of the pushed ending that waits, if any. */
  pending?: number;
  ended: boolean;
  /** Whether any step asked for a read, a re-read, or a wake-up for a pending ending. */
  read: boolean;
  reread: boolean;
  woke: boolean;
  warnings: number;
  holdsAhead?: boolean;
}

const cases: Array<[string, Step[], Outcome]> = [
  [
    'pushes at the next offsets are taken in order',
    [
      ['push', status(1)],
      ['push', status(2)],
    ],
    { log: [1, 2], ended: false, read: false, reread: false, woke: false, warnings: 0 },
  ],
  [
    'a repeated push of the same event is dropped',
    [
      ['push', status(1)],
      ['push', status(1)],
    ],
    { log: [1], ended: false, read: false, reread: false, woke: false, warnings: 0 },
  ],
  [
    'a push beyond the next offset is held and asks for a read',
    [
      ['push', status(1)],
      ['push', status(3)],
    ],
    { log: [1], ended: false, read: true, reread: false, woke: false, warnings: 0, holdsAhead: true },
  ],
  [
    'the read that fills the gap takes the held push too',
    [
      ['push', status(1)],
      ['push', status(3)],
      ['read', status(2)],
    ],
    { log: [1, 2, 3], ended: false, read: true, reread: false, woke: false, warnings: 0, holdsAhead: false },
  ],
  [
    'a push that differs from the copy cuts it back and asks for a re-read',
    [
      ['push', status(1)],
      ['push', status(2)],
      ['push', status(1, 'waiting')],
    ],
    { log: [], ended: false, read: true, reread: true, woke: false, warnings: 1 },
  ],
  [
    'a pushed ending waits, not taken',
    [
      ['push', status(1)],
      ['push', done(2)],
    ],
    { log: [1], pending: 2, ended: false, read: false, reread: false, woke: true, warnings: 0 },
  ],
  [
    'the same ending pushed again changes nothing',
    [
      ['push', done(1)],
      ['push', done(1)],
    ],
    { log: [], pending: 1, ended: false, read: false, reread: false, woke: true, warnings: 0 },
  ],
  [
    'describe shows the workflow closed: the ending is taken and ends the copy',
    [['push', done(1)], ['confirm']],
    { log: [1], ended: true, read: false, reread: false, woke: true, warnings: 0 },
  ],
  [
    'the log returns the pushed ending: it is taken',
    [
      ['push', done(1)],
      ['read', done(1)],
    ],
    { log: [1], ended: true, read: false, reread: false, woke: true, warnings: 0 },
  ],
  [
    "another event at the ending's offset shows it was not recorded",
    [
      ['push', done(1)],
      ['push', status(1)],
    ],
    { log: [1], ended: false, read: false, reread: false, woke: true, warnings: 1 },
  ],
  [
    'a read that ended without the pushed ending drops it',
    [
      ['push', done(1)],
      ['readOver', 1],
    ],
    { log: [], ended: false, read: false, reread: false, woke: true, warnings: 1 },
  ],
  [
    'a push beyond a waiting ending shows the ending was not recorded',
    [
      ['push', done(1)],
      ['push', status(2)],
    ],
    { log: [], ended: false, read: true, reread: false, woke: true, warnings: 1, holdsAhead: true },
  ],
  [
    'a held ending reached when a read fills the gap waits too (still held: the next read confirms it or not)',
    [
      ['push', done(2)],
      ['read', status(1)],
    ],
    { log: [1], pending: 2, ended: false, read: true, reread: false, woke: true, warnings: 0, holdsAhead: true },
  ],
  [
    'nothing is taken after the copy ended',
    [
      ['read', done(1)],
      ['push', status(2)],
      ['read', status(2)],
    ],
    { log: [1], ended: true, read: false, reread: false, woke: false, warnings: 0 },
  ],
];

describe('FeedLog: what a feed takes of pushed and read events', () => {
  it.each(cases)('%s', (_name, steps, expected) => {
    const log = new FeedLog();
    const seen = { read: false, reread: false, woke: false, warnings: 0 };
    for (const step of steps) {
      if (step[0] === 'confirm') log.confirmPending();
      else if (step[0] === 'readOver')
        seen.warnings += log.dropUnread(log.pending?.offset === step[1] ? log.pending : undefined) ? 1 : 0;
      else {
        const verdict = log.accept(step[1], step[0] === 'read');
        seen.read ||= verdict.read;
        seen.reread ||= verdict.reread;
        seen.woke ||= verdict.pending;
        seen.warnings += verdict.warnings.length;
      }
    }
    const outcome: Outcome = { log: log.after(0).map((event) => event.offset), ended: log.ended, ...seen };
    if (log.pending) outcome.pending = log.pending.offset;
    if (expected.holdsAhead !== undefined) outcome.holdsAhead = log.holdsAhead;
    expect(outcome).toEqual(expected);
  });

  it.each([
    ['a turn starts running without a status event', [], 'running'],
    [
      'the last status event',
      [status(1, 'waiting'), { type: 'message', text: 'x', offset: 2, at } as unknown as TurnEvent],
      'waiting',
    ],
  ] as Array<[string, TurnEvent[], string]>)('lastStatus: %s', (_name, events, expected) => {
    const log = new FeedLog();
    for (const event of events) log.accept(event, true);
    expect(log.lastStatus()).toBe(expected);
  });

  it('a synthesized ending takes the next offset and ends the copy', () => {
    const log = new FeedLog();
    log.accept(status(1), true);
    log.synthesize(
      { type: 'error', code: 'terminated', message: 'The turn was terminated in Temporal.' },
      new Date(at),
    );
    expect(log.after(1)).toEqual([
      {
        type: 'error',
        code: 'terminated',
        message: 'The turn was terminated in Temporal.',
        offset: 2,
        at,
        synthesized: true,
      },
    ]);
    expect(log.ended).toBe(true);
  });
});
