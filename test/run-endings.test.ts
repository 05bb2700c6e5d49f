import { contextExceededMessage, emptyRecoveryAnswer, refusalMessage } from '../core/guidance';
import {
  answeredEnding,
  cancelledEnding,
  completedEnding,
  contextExceededEnding,
  emptyResponseEnding,
  endedCallMessage,
  failedEnding,
  invalidParamsEnding,
  missingOutputEnding,
  refusalEnding,
  thrownEnding,
  type Ending,
} from '../core/run/endings';
import {
  closedSkillRunEnding,
  closedTurnEnding,
  settleSkillEnding,
  skillRunResultOf,
  type Closure,
  type SettledEnding,
  type SkillRunEnded,
  type SkillRunEnding,
} from '../core/run/skill-result';
import type { JsonSchema } from '../core/json-validator';
import { cutCallAnswer } from '../core/run/cancel';
import { isCancelledCallResult } from '../core/events';

/**
 * Every ending the engine builds (core/run/endings.ts) and what a skill run's ending means for its invoker
 * (core/run/skill-result.ts), value for value: these are what clients, sessions and histories read.
 */
describe('endings', () => {
  it.each<[string, Ending, Ending]>([
    ['an answer', answeredEnding('Hi'), { status: 'completed', output: 'Hi' }],
    [
      'an answer cut by max_tokens',
      answeredEnding('Hi', 'max_tokens'),
      { status: 'completed', output: 'Hi', reason: 'max_tokens' },
    ],
    ['the round budget without a plan', completedEnding('max_rounds'), { status: 'completed', reason: 'max_rounds' }],
    [
      'empty responses',
      emptyResponseEnding(),
      { status: 'completed', reason: 'empty_response', output: emptyRecoveryAnswer },
    ],
    [
      'a rule',
      failedEnding('skill_limit', 'Too long.'),
      { status: 'failed', reason: 'skill_limit', error: { code: 'skill_limit', message: 'Too long.' } },
    ],
    [
      'a rule, with an output',
      failedEnding('invalid_output', 'Bad.', '{}'),
      { status: 'failed', reason: 'invalid_output', error: { code: 'invalid_output', message: 'Bad.' }, output: '{}' },
    ],
    [
      'a refusal with words',
      refusalEnding('No.'),
      { status: 'failed', reason: 'refusal', output: 'No.', error: { code: 'refusal', message: refusalMessage } },
    ],
    [
      'a silent refusal',
      refusalEnding(''),
      { status: 'failed', reason: 'refusal', output: undefined, error: { code: 'refusal', message: refusalMessage } },
    ],
    [
      'a full context window',
      contextExceededEnding(),
      {
        status: 'failed',
        reason: 'context_window_exceeded',
        error: { code: 'context_window_exceeded', message: contextExceededMessage },
      },
    ],
    [
      'a model error',
      thrownEnding('model', { code: 'ModelTransient', message: 'Down.' }),
      { status: 'failed', reason: 'model_error', error: { code: 'ModelTransient', message: 'Down.' } },
    ],
    [
      'anything else thrown',
      thrownEnding('other', { code: 'internal_error', message: 'Oops.' }),
      { status: 'failed', reason: 'internal_error', error: { code: 'internal_error', message: 'Oops.' } },
    ],
    [
      'invalid params',
      invalidParamsEnding('exam', [{ message: 'a is missing' }, { message: 'b is too big' }]),
      {
        status: 'failed',
        reason: 'invalid_params',
        error: {
          code: 'invalid_params',
          message: 'The parameters given for skill exam are not valid: a is missing; b is too big.',
        },
      },
    ],
    [
      'a missing declared output',
      missingOutputEnding('exam', { reason: 'max_rounds', output: 'text' }),
      {
        status: 'failed',
        reason: 'invalid_output',
        output: 'text',
        error: {
          code: 'invalid_output',
          message: 'Skill exam declares a structured output, and its run ended (max_rounds) without a valid one.',
        },
      },
    ],
    [
      'a missing declared output, after an answer',
      missingOutputEnding('exam', {}),
      {
        status: 'failed',
        reason: 'invalid_output',
        output: undefined,
        error: {
          code: 'invalid_output',
          message: 'Skill exam declares a structured output, and its run ended (completed) without a valid one.',
        },
      },
    ],
    ['a cancel', cancelledEnding(), { status: 'cancelled', reason: 'cancelled' }],
    [
      'an expiry',
      cancelledEnding('expired', 'Expired.'),
      { status: 'cancelled', reason: 'expired', output: 'Expired.' },
    ],
  ])('%s', (_, built, expected) => {
    expect(built).toStrictEqual(expected);
    expect(Object.keys(built)).toEqual(Object.keys(expected));
  });

  it.each<[Ending, string]>([
    [failedEnding('plan_violations', 'Broke the plan.'), 'Broke the plan.'],
    [cancelledEnding('cancelled_by_user'), 'The turn ended.'],
  ])('the tool result of the call a run ended on: %j', (ending, message) => {
    expect(endedCallMessage(ending)).toBe(message);
  });
});

describe("a skill run's ending and result", () => {
  const schema: JsonSchema = { type: 'object', properties: { score: { type: 'integer' } }, required: ['score'] };
  const ended = (overrides: Partial<SkillRunEnded>): SkillRunEnded => ({
    skill: 'grader',
    ending: answeredEnding('Done.'),
    outputSchema: null,
    accepted: undefined,
    ...overrides,
  });
  const missing = (reason: string) =>
    `Skill grader declares a structured output, and its run ended (${reason}) without a valid one.`;

  it.each<[string, SkillRunEnded, SettledEnding, SkillRunEnding]>([
    [
      'an answer, no declared output',
      ended({}),
      { ending: answeredEnding('Done.') },
      { status: 'completed', success: true, output: 'Done.' },
    ],
    [
      'an answer cut by max_tokens keeps its reason',
      ended({ ending: answeredEnding('Do', 'max_tokens') }),
      { ending: answeredEnding('Do', 'max_tokens') },
      { status: 'completed', reason: 'max_tokens', success: true, output: 'Do' },
    ],
    [
      'a last word with no output',
      ended({ ending: completedEnding('max_rounds') }),
      { ending: completedEnding('max_rounds') },
      { status: 'completed', reason: 'max_rounds', success: true, output: '' },
    ],
    [
      'the output the policy accepted',
      ended({ outputSchema: schema, accepted: { value: { score: 3 } }, ending: answeredEnding('{"score": 3}') }),
      { ending: answeredEnding('{"score": 3}'), output: { value: { score: 3 } } },
      { status: 'completed', success: true, output: { score: 3 } },
    ],
    [
      'a valid output in a last word the policy never saw',
      ended({ outputSchema: schema, ending: { ...completedEnding('max_rounds'), output: '{"score": 2}' } }),
      { ending: { ...completedEnding('max_rounds'), output: '{"score": 2}' }, output: { value: { score: 2 } } },
      { status: 'completed', reason: 'max_rounds', success: true, output: { score: 2 } },
    ],
    [
      'no valid output: the run fails, once',
      ended({ outputSchema: schema, ending: { ...completedEnding('max_rounds'), output: '{"score": "x"}' } }),
      { ending: missingOutputEnding('grader', { reason: 'max_rounds', output: '{"score": "x"}' }) },
      {
        status: 'failed',
        reason: 'invalid_output',
        success: false,
        output: null,
        error: { code: 'invalid_output', message: missing('max_rounds') },
      },
    ],
    [
      'no output at all',
      ended({ outputSchema: schema, ending: completedEnding('max_rounds') }),
      { ending: missingOutputEnding('grader', { reason: 'max_rounds' }) },
      {
        status: 'failed',
        reason: 'invalid_output',
        success: false,
        output: null,
        error: { code: 'invalid_output', message: missing('max_rounds') },
      },
    ],
    [
      'a failure keeps its error, whatever the skill declares',
      ended({ outputSchema: schema, ending: failedEnding('skill_limit', 'Too long.', 'partial') }),
      { ending: failedEnding('skill_limit', 'Too long.', 'partial') },
      {
        status: 'failed',
        reason: 'skill_limit',
        success: false,
        output: null,
        error: { code: 'skill_limit', message: 'Too long.' },
      },
    ],
    [
      'a cancel says so, with the last words',
      ended({ ending: cancelledEnding('cancelled_by_user', 'Stopped.') }),
      { ending: cancelledEnding('cancelled_by_user', 'Stopped.') },
      {
        status: 'cancelled',
        reason: 'cancelled_by_user',
        success: false,
        output: null,
        error: {
          code: 'cancelled_by_user',
          message: 'Skill grader did not finish: it was cancelled (cancelled_by_user). Its last words: Stopped.',
        },
      },
    ],
    [
      'a cancel without words',
      ended({ ending: cancelledEnding() }),
      { ending: cancelledEnding() },
      {
        status: 'cancelled',
        reason: 'cancelled',
        success: false,
        output: null,
        error: { code: 'cancelled', message: 'Skill grader did not finish: it was cancelled (cancelled).' },
      },
    ],
  ])('%s', (_, input, settled, result) => {
    expect(settleSkillEnding(input)).toEqual(settled);
    expect(skillRunResultOf('grader', settled)).toEqual(result);
  });

  it.each<[Closure, ReturnType<typeof closedSkillRunEnding>]>([
    [
      { kind: 'cancelled' },
      {
        status: 'cancelled',
        reason: 'cancelled',
        error: { code: 'cancelled', message: 'The skill run of grader was cancelled.' },
      },
    ],
    [
      { kind: 'terminated' },
      {
        status: 'failed',
        reason: 'terminated',
        error: { code: 'terminated', message: 'The skill run of grader was terminated in Temporal.' },
      },
    ],
    [
      { kind: 'timed_out' },
      {
        status: 'failed',
        reason: 'timed_out',
        error: { code: 'timed_out', message: 'The skill run of grader timed out in Temporal.' },
      },
    ],
    [
      { kind: 'failed', message: 'boom' },
      {
        status: 'failed',
        reason: 'workflow_failed',
        error: { code: 'workflow_failed', message: 'The skill run of grader failed: boom' },
      },
    ],
  ])('a skill run Temporal closed: %j', (closure, expected) => {
    expect(closedSkillRunEnding('grader', closure)).toStrictEqual(expected);
  });

  it.each<[Closure, ReturnType<typeof closedTurnEnding>]>([
    [{ kind: 'cancelled' }, { status: 'cancelled', reason: 'cancelled' }],
    [
      { kind: 'terminated' },
      {
        status: 'failed',
        reason: 'terminated',
        error: { code: 'terminated', message: 'The turn was terminated in Temporal.' },
      },
    ],
    [
      { kind: 'timed_out' },
      {
        status: 'failed',
        reason: 'timed_out',
        error: { code: 'timed_out', message: 'The turn timed out in Temporal.' },
      },
    ],
    [
      { kind: 'failed', message: 'boom' },
      { status: 'failed', reason: 'workflow_failed', error: { code: 'workflow_failed', message: 'boom' } },
    ],
  ])('a turn Temporal closed, as its session records it: %j', (closure, expected) => {
    expect(closedTurnEnding(closure)).toStrictEqual(expected);
  });

  it('a tool call a cancel cut ends as a cancelled error, which clients can tell', () => {
    expect(cutCallAnswer).toEqual({
      content: '{"cancelled":"turn cancelled"}',
      isError: true,
      result: { cancelled: 'turn cancelled' },
    });
    expect(isCancelledCallResult(cutCallAnswer.result)).toBe(true);
  });
});
