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

  it('stays fast on patterns that make backtracking matchers explode', () => {
    const started = Date.now();
    expect(matchesLinkPattern('a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(64))).toBe(false);
    expect(Date.now() - started).toBeLessThan(50);
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
