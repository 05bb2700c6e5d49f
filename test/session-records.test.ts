import { boundedRecords, cutToBytes, historyWindow, sessionRecordLimits, utf8Bytes } from '../core/session-records';

const turn = (message: string, output?: string, status = 'completed') => ({
  status,
  message,
  ...(output === undefined ? {} : { output }),
});

/** Issue 13.6: what a session keeps of its turns, and what a new turn sees of them, is bounded in bytes. */
describe('session records', () => {
  it.each([
    ['ASCII', 'abc', 3],
    ['two-byte', 'é', 2],
    ['three-byte', '€中', 6],
    ['a surrogate pair', '😀', 4],
    ['a lone surrogate (sent as U+FFFD)', '\ud800x', 4],
    ['empty', '', 0],
  ])('counts UTF-8 bytes: %s', (_name, text, bytes) => {
    expect(utf8Bytes(text)).toBe(bytes);
    if (!/[\ud800-\udfff](?![\udc00-\udfff])/.test(text)) expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, 'utf8'));
  });

  it.each([
    ['within the limit', 'abc', 3, 'abc'],
    ['ASCII', 'abcdef', 4, 'abcd'],
    ['never half a character', '€€', 5, '€'],
    ['never half a surrogate pair', 'a😀', 4, 'a'],
    ['nothing fits', '€', 2, ''],
  ])('cuts text to bytes: %s', (_name, text, bytes, expected) => {
    expect(cutToBytes(text, bytes)).toBe(expected);
  });

  describe('the history window', () => {
    it.each([
      {
        name: 'all fit',
        turns: [turn('a', 'b'), turn('c', 'd')],
        window: 10,
        bytes: 100,
        expected: [
          { user: 'a', assistant: 'b' },
          { user: 'c', assistant: 'd' },
        ],
      },
      {
        name: 'the count caps it',
        turns: [turn('a', 'b'), turn('c', 'd')],
        window: 1,
        bytes: 100,
        expected: [{ user: 'c', assistant: 'd' }],
      },
      {
        name: 'the bytes cap it, newest kept',
        turns: [turn('aaaa', 'bbbb'), turn('cc', 'dd')],
        window: 10,
        bytes: 6,
        expected: [{ user: 'cc', assistant: 'dd' }],
      },
      {
        name: 'an exchange that does not fit ends the window (no gaps)',
        turns: [turn('a', 'b'), turn('x'.repeat(50), 'y'), turn('c', 'd')],
        window: 10,
        bytes: 10,
        expected: [{ user: 'c', assistant: 'd' }],
      },
      {
        name: 'the newest alone too large: cut to fit',
        turns: [turn('u'.repeat(10), 'v'.repeat(10))],
        window: 10,
        bytes: 8,
        expected: [{ user: 'uuuu', assistant: 'vvvv' }],
      },
      {
        name: 'turns without an answer are left out',
        turns: [turn('a', 'b'), turn('lost', undefined, 'failed'), turn('c', 'd')],
        window: 2,
        bytes: 100,
        expected: [
          { user: 'a', assistant: 'b' },
          { user: 'c', assistant: 'd' },
        ],
      },
      { name: 'a window of 0 exchanges', turns: [turn('a', 'b')], window: 0, bytes: 100, expected: [] },
      { name: 'a window of 0 bytes', turns: [turn('a', 'b')], window: 10, bytes: 0, expected: [] },
    ])('$name', ({ turns, window, bytes, expected }) => {
      expect(historyWindow(turns, window, bytes)).toEqual(expected);
    });

    it('never passes its byte cap, whatever the text', () => {
      const turns = Array.from({ length: 40 }, (_, i) => turn('€'.repeat(1000 + i * 37), '😀'.repeat(500 + i)));
      for (const bytes of [0, 1, 5, 1000, 10_000, 100_000]) {
        const window = historyWindow(turns, 30, bytes);
        expect(window.reduce((sum, e) => sum + utf8Bytes(e.user) + utf8Bytes(e.assistant), 0)).toBeLessThanOrEqual(
          bytes,
        );
      }
    });
  });

  describe('the records a session keeps', () => {
    const limits = { maxRecords: 3, maxTextBytes: 20 };
    it.each([
      { name: 'all fit', turns: [turn('a', 'b'), turn('c', 'd')], kept: ['a', 'c'] },
      {
        name: 'the newest, at most maxRecords',
        turns: ['1', '2', '3', '4', '5'].map((m) => turn(m, 'x')),
        kept: ['3', '4', '5'],
      },
      {
        name: 'as many as fit in the bytes, from the newest',
        turns: [turn('a'.repeat(8), 'b'), turn('c'.repeat(8), 'd'), turn('e'.repeat(8), 'f')],
        kept: ['c'.repeat(8), 'e'.repeat(8)],
      },
    ])('$name', ({ turns, kept }) => {
      expect(boundedRecords(turns, limits).map((record) => record.message)).toEqual(kept);
    });

    it('a newest record larger than the limit alone is kept, cut and marked', () => {
      const [only, ...rest] = boundedRecords([turn('old', 'x'), turn('m'.repeat(15), 'o'.repeat(15))], limits);
      expect(rest).toEqual([]);
      expect(only).toEqual({ status: 'completed', message: 'm'.repeat(15), output: 'o'.repeat(5), truncated: true });
    });

    it('keeps the records it does not cut as they are (the same objects)', () => {
      const turns = [turn('a', 'b'), turn('c', 'd')];
      const kept = boundedRecords(turns, limits);
      expect(kept[0]).toBe(turns[0]);
      expect(kept[1]).toBe(turns[1]);
    });

    it('the defaults hold 2,000 turns of 100,000-character messages within 1 MiB', () => {
      const turns = Array.from({ length: 2_000 }, (_, i) => ({
        id: `turn-s-${i + 1}`,
        status: 'completed',
        message: 'm'.repeat(100_000),
        output: `answer ${i}`,
      }));
      const kept = boundedRecords(turns);
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.at(-1)!.id).toBe('turn-s-2000');
      expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(sessionRecordLimits.maxTextBytes + 64 * 1024);
    });
  });
});
