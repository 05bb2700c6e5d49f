import {
  linkPatternProblem,
  linkRefusals,
  linkVerdict,
  matchesLinkPattern,
  type LinkGrant,
  type LinkRequest,
} from '../core/links';

describe('link patterns', () => {
  it.each([
    ['question*', 'question_3', true],
    ['question*', 'question', true],
    ['question*', 'exam_params', false],
    ['question_?', 'question_3', true],
    ['question_?', 'question_12', false],
    ['*', 'anything', true],
    ['*_params', 'exam_params', true],
    ['*_params', 'exam_params_2', false],
    ['a*b*c', 'axxbyyc', true],
    ['a*b*c', 'axxbyy', false],
    ['tool:*', 'tool:http_fetch', true],
    ['exam_params', 'exam_params', true],
    ['exam_params', 'exam_param', false],
    ['**', '', true],
    ['?', '', false],
  ])('%s against %s: %s', (pattern, name, expected) => {
    expect(matchesLinkPattern(pattern, name)).toBe(expected);
  });

  it('reads the name at most (pattern + 1) × (name + 1) times on patterns that make backtracking matchers explode', () => {
    const pattern = `${'a*'.repeat(20)}b`;
    const text = 'a'.repeat(64);
    const bound = (pattern.length + 1) * (text.length + 1);
    const name = readsCounted(text, bound);
    expect(matchesLinkPattern(pattern, name.value)).toBe(false);
    expect(name.reads()).toBeGreaterThan(text.length);
  });

  it.each([
    ['question*', null],
    ['tool:*', null],
    ['', 'not a checkpoint name pattern'],
    ['Question*', 'not a checkpoint name pattern'],
    ['question[0-9]', 'not a checkpoint name pattern'],
    ['q'.repeat(65), 'not a checkpoint name pattern'],
  ])('pattern %j: %s', (pattern, problem) => {
    const found = linkPatternProblem(pattern);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });
});

describe('what a link grants', () => {
  const grant: LinkGrant = { id: 'lnk_a', sessionId: 's1', checkpoints: 'question*', messages: false };
  const open: LinkGrant = { ...grant, checkpoints: null, messages: true };

  it.each<[string, LinkGrant, LinkRequest, string | null]>([
    ['reading its session', grant, { kind: 'read', sessionId: 's1' }, null],
    ['reading another session', grant, { kind: 'read', sessionId: 's2' }, linkRefusals.wrongSession],
    ['a message, not allowed', grant, { kind: 'message', sessionId: 's1' }, linkRefusals.messagesNotAllowed],
    ['a message, allowed', open, { kind: 'message', sessionId: 's1' }, null],
    ['a message to another session', open, { kind: 'message', sessionId: 's2' }, linkRefusals.wrongSession],
    ['an answer within the pattern', grant, { kind: 'answer', sessionId: 's1', checkpointName: 'question_1' }, null],
    [
      'an answer outside the pattern',
      grant,
      { kind: 'answer', sessionId: 's1', checkpointName: 'exam_params' },
      linkRefusals.checkpointNotAllowed,
    ],
    ['any answer without a pattern', open, { kind: 'answer', sessionId: 's1', checkpointName: 'exam_params' }, null],
    [
      'an answer in another session',
      open,
      { kind: 'answer', sessionId: 's2', checkpointName: 'question_1' },
      linkRefusals.wrongSession,
    ],
    ['its own description', grant, { kind: 'self' }, null],
    ['any other route', open, { kind: 'other', route: 'GET /v1/skills' }, linkRefusals.routeNotAllowed],
  ])('%s', (_name, given, request, refusal) => {
    const verdict = linkVerdict(given, request);
    if (refusal === null) expect(verdict).toEqual({ allowed: true });
    else expect(verdict).toMatchObject({ allowed: false, code: refusal });
  });

  it('says which session, pattern and route it allows', () => {
    expect(linkVerdict(grant, { kind: 'read', sessionId: 's2' })).toMatchObject({
      message: expect.stringContaining('s1'),
    });
    expect(linkVerdict(grant, { kind: 'answer', sessionId: 's1', checkpointName: 'exam_params' })).toMatchObject({
      message: expect.stringContaining('question*'),
    });
    expect(linkVerdict(grant, { kind: 'other', route: 'DELETE /v1/sessions/:id' })).toMatchObject({
      message: expect.stringContaining('DELETE /v1/sessions/:id'),
    });
  });
});

/**
 * `text` as a string object that counts how often it is read (an index, or a method called on it) and throws once it
 * was read more than `bound` times: a matcher that backtracks is stopped by its count, whatever the machine's speed.
 */
function readsCounted(text: string, bound: number): { value: string; reads: () => number } {
  let reads = 0;
  const read = () => {
    reads += 1;
    if (reads > bound) throw new Error(`the name was read more than ${bound} times`);
  };
  const value = new Proxy(new String(text), {
    get(target, key) {
      const member: unknown = Reflect.get(target, key);
      if (typeof member === 'function') {
        return (...args: unknown[]) => {
          read();
          return (member as (...args: unknown[]) => unknown).apply(target, args);
        };
      }
      if (typeof key === 'string' && /^\d+$/.test(key)) read();
      return member;
    },
  });
  return { value: value as unknown as string, reads: () => reads };
}
