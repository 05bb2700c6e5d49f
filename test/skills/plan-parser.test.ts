import { formatPlan, parsePlan, planSpecOf, PlanSyntaxError } from '../../core/skills';

describe('plan parser', () => {
  it('parses the exam plan into a sequence of checkpoints, steps and a repetition', () => {
    expect(
      parsePlan(
        'checkpoint:exam_params question-generation (adaptive-difficulty)+ performance-analytics checkpoint:post_exam_routing',
      ),
    ).toEqual({
      kind: 'sequence',
      items: [
        { kind: 'checkpoint', name: 'exam_params' },
        { kind: 'step', name: 'question-generation' },
        { kind: 'oneOrMore', item: { kind: 'step', name: 'adaptive-difficulty' } },
        { kind: 'step', name: 'performance-analytics' },
        { kind: 'checkpoint', name: 'post_exam_routing' },
      ],
    });
  });

  it('parses optional, zero-or-more, groups and alternatives', () => {
    expect(parsePlan('a? (b c)* (d | e checkpoint:f)+')).toEqual({
      kind: 'sequence',
      items: [
        { kind: 'optional', item: { kind: 'step', name: 'a' } },
        {
          kind: 'zeroOrMore',
          item: {
            kind: 'sequence',
            items: [
              { kind: 'step', name: 'b' },
              { kind: 'step', name: 'c' },
            ],
          },
        },
        {
          kind: 'oneOrMore',
          item: {
            kind: 'choice',
            options: [
              { kind: 'step', name: 'd' },
              {
                kind: 'sequence',
                items: [
                  { kind: 'step', name: 'e' },
                  { kind: 'checkpoint', name: 'f' },
                ],
              },
            ],
          },
        },
      ],
    });
  });

  it('flattens groups that add nothing and parses a single step as itself', () => {
    expect(parsePlan('a (b c) ((d))')).toEqual({
      kind: 'sequence',
      items: ['a', 'b', 'c', 'd'].map((name) => ({ kind: 'step', name })),
    });
    expect(parsePlan('  only  ')).toEqual({ kind: 'step', name: 'only' });
    expect(parsePlan('(a | b) | c')).toEqual({
      kind: 'choice',
      options: ['a', 'b', 'c'].map((name) => ({ kind: 'step', name })),
    });
  });

  it('formats the canonical text, which parses back to the same tree', () => {
    const sources = ['checkpoint:x a (b c)+ d?', 'a | b c', '(a | b) c*', '(a b)? checkpoint:q_1*', 'a (b | c)'];
    for (const source of sources) {
      const tree = parsePlan(source);
      expect(parsePlan(formatPlan(tree))).toEqual(tree);
    }
    expect(formatPlan(parsePlan('( a )+  (b|c)'))).toBe('a+ (b | c)');
  });

  it('lists the distinct steps and checkpoints in order of first appearance', () => {
    expect(planSpecOf('checkpoint:s a (b a)+ checkpoint:s c')).toEqual(
      expect.objectContaining({ steps: ['a', 'b', 'c'], checkpoints: ['s'] }),
    );
  });

  const failures: [string, string, number][] = [
    ['', 'the plan is empty', 1],
    ['   ', 'the plan is empty', 1],
    ['(a b', '"(" is never closed', 1],
    ['a b)', '")" has no matching "("', 4],
    ['a ()', 'empty group "()"', 3],
    ['a | | b', '"|" needs a step, checkpoint or group on both sides', 5],
    ['a |', '"|" needs a step, checkpoint or group on both sides', 4],
    ['+a', '"+" has nothing to repeat', 1],
    ['a+?', 'two quantifiers in a row ("+?")', 3],
    ['a Bad_Step', 'step "Bad_Step" may contain only lowercase letters a-z, digits 0-9 and hyphens', 3],
    ['a -b', 'step "-b" must not start or end with a hyphen', 3],
    ['checkpoint:Exam', '"checkpoint:Exam" is not a valid checkpoint', 1],
    ['checkpoint:', '"checkpoint:" is not a valid checkpoint', 1],
    ['gate:x', '"gate:x" has an unknown prefix', 1],
  ];
  it.each(failures)('rejects %j: %s at column %i', (source, reason, column) => {
    let caught: unknown;
    try {
      parsePlan(source);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PlanSyntaxError);
    expect((caught as PlanSyntaxError).reason).toBe(`${reason} at column ${column}.`);
    expect((caught as PlanSyntaxError).column).toBe(column);
    expect((caught as PlanSyntaxError).fix.length).toBeGreaterThan(10);
  });

  it('caps the plan length', () => {
    expect(() => parsePlan(Array.from({ length: 700 }, () => 'ab').join(' '))).toThrow(
      'the plan is 2099 characters long; the limit is 2000',
    );
  });
});
