import {
  advancePlan,
  allowedNext,
  canFollow,
  compilePlan,
  isAllowed,
  jumpToStep,
  parsePlan,
  startPlan,
  type PlanState,
} from '../../core/skills';

const step = (name: string) => ({ kind: 'step' as const, name });
const checkpoint = (name: string) => ({ kind: 'checkpoint' as const, name });

describe('plan automaton', () => {
  const exam = compilePlan(
    parsePlan(
      'checkpoint:exam_params question-generation adaptive-difficulty+ performance-analytics checkpoint:post_exam_routing',
    ),
  );

  it('walks the exam plan: checkpoint first, repeated steps, then completion', () => {
    let state: PlanState = startPlan(exam);
    expect(allowedNext(exam, state)).toEqual([checkpoint('exam_params')]);
    expect(state.complete).toBe(false);
    expect(advancePlan(exam, state, step('question-generation'))).toBeNull();

    state = advancePlan(exam, state, checkpoint('exam_params')) as PlanState;
    expect(allowedNext(exam, state)).toEqual([step('question-generation')]);
    state = advancePlan(exam, state, step('question-generation')) as PlanState;
    expect(allowedNext(exam, state)).toEqual([step('adaptive-difficulty')]);
    for (let answer = 0; answer < 3; answer += 1) {
      state = advancePlan(exam, state, step('adaptive-difficulty')) as PlanState;
      expect(allowedNext(exam, state)).toEqual([step('adaptive-difficulty'), step('performance-analytics')]);
    }
    state = advancePlan(exam, state, step('performance-analytics')) as PlanState;
    expect(allowedNext(exam, state)).toEqual([checkpoint('post_exam_routing')]);
    expect(state.complete).toBe(false);
    state = advancePlan(exam, state, checkpoint('post_exam_routing')) as PlanState;
    expect(state).toEqual({ next: [], complete: true });
  });

  it('is plain JSON', () => {
    expect(JSON.parse(JSON.stringify(exam))).toEqual(exam);
    expect(exam).toEqual({
      symbols: [
        checkpoint('exam_params'),
        step('question-generation'),
        step('adaptive-difficulty'),
        step('performance-analytics'),
        checkpoint('post_exam_routing'),
      ],
      first: [0],
      follow: [[1], [2], [2, 3], [4], []],
      last: [4],
      nullable: false,
    });
  });

  it('jumps to a deadline phase', () => {
    const state = jumpToStep(exam, 'performance-analytics') as PlanState;
    expect(allowedNext(exam, state)).toEqual([step('performance-analytics')]);
    expect(allowedNext(exam, advancePlan(exam, state, step('performance-analytics')) as PlanState)).toEqual([
      checkpoint('post_exam_routing'),
    ]);
    expect(jumpToStep(exam, 'no-such-step')).toBeNull();
  });

  it('handles optional steps, zero-or-more groups and alternatives', () => {
    const plan = compilePlan(parsePlan('a? (b c)* (d | e)'));
    const start = startPlan(plan);
    expect(allowedNext(plan, start)).toEqual([step('a'), step('b'), step('d'), step('e')]);
    const afterB = advancePlan(plan, start, step('b')) as PlanState;
    expect(allowedNext(plan, afterB)).toEqual([step('c')]);
    const afterC = advancePlan(plan, afterB, step('c')) as PlanState;
    expect(allowedNext(plan, afterC)).toEqual([step('b'), step('d'), step('e')]);
    expect(afterC.complete).toBe(false);
    expect(advancePlan(plan, afterC, step('e'))).toEqual({ next: [], complete: true });
  });

  it('knows when an all-optional plan is complete before it starts, and when a plan may end early', () => {
    expect(startPlan(compilePlan(parsePlan('a* b?'))).complete).toBe(true);
    const plan = compilePlan(parsePlan('a b*'));
    const afterA = advancePlan(plan, startPlan(plan), step('a')) as PlanState;
    expect(afterA.complete).toBe(true);
    expect(isAllowed(plan, afterA, step('b'))).toBe(true);
  });

  it('keeps every matching position when a step appears twice', () => {
    const plan = compilePlan(parsePlan('a+ a b'));
    const once = advancePlan(plan, startPlan(plan), step('a')) as PlanState;
    expect(allowedNext(plan, once)).toEqual([step('a')]);
    const twice = advancePlan(plan, once, step('a')) as PlanState;
    expect(allowedNext(plan, twice)).toEqual([step('a'), step('b')]);
  });

  it('tells whether one symbol can come after another', () => {
    expect(canFollow(exam, checkpoint('exam_params'), step('performance-analytics'))).toBe(true);
    expect(canFollow(exam, step('performance-analytics'), step('question-generation'))).toBe(false);
    expect(canFollow(exam, step('adaptive-difficulty'), step('adaptive-difficulty'))).toBe(true);
  });
});
