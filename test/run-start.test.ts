import { newPolicyState } from '../core/policy';
import { preload, preloadedNote, type Preload } from '../core/run/start';
import { newRunState, type RunState } from '../core/run/state';
import type { SkillManifest } from '../core/skills';

/** A turn started with a skill loads it first, as a load_skill the policy rules (core/run/start.ts). */
const at = 1_000;
const quiz = {
  name: 'quiz',
  parameters: [{ name: 'level', description: 'level', type: 'integer', required: true }],
} as unknown as SkillManifest;
const loadCall = { id: 'preload', name: 'load_skill', input: { name: 'quiz' } };
const routed: RunState = newRunState({ ...newPolicyState(), route: { skill: 'other', from: 'route' } });
const onLastViolation: RunState = {
  ...routed,
  policy: { ...routed.policy, violations: routed.policy.settings.maxPlanViolations - 1 },
};

describe('the skill a turn starts with', () => {
  it.each<[string, RunState, SkillManifest | undefined, Record<string, unknown> | undefined, Preload]>([
    ['is loaded, with its parameters', newRunState(), quiz, { level: 2 }, { kind: 'load', call: loadCall }],
    ['is loaded without parameters', newRunState(), quiz, undefined, { kind: 'load', call: loadCall }],
    [
      'not in the catalog: the load tool says so',
      newRunState(),
      undefined,
      { level: 2 },
      { kind: 'load', call: loadCall },
    ],
    [
      'with parameters that are not its own: the turn ends invalid_params',
      newRunState(),
      quiz,
      { level: 'high' },
      {
        kind: 'end',
        ending: {
          status: 'failed',
          reason: 'invalid_params',
          error: {
            code: 'invalid_params',
            message: 'The parameters given for skill quiz are not valid: params.level is a string, not an integer.',
          },
        },
      },
    ],
    [
      'the policy refuses: the model is told why',
      routed,
      quiz,
      undefined,
      {
        kind: 'note',
        text: 'The skill quiz could not be loaded: The human chose other at route; only that skill may be loaded now.',
      },
    ],
    [
      'the policy ends the turn on it',
      onLastViolation,
      quiz,
      undefined,
      { kind: 'end', ending: expect.objectContaining({ status: 'failed', reason: 'plan_violations' }) },
    ],
  ])('%s', (_, state, manifest, params, expected) => {
    expect(preload(state, manifest, 'quiz', params, at).preload).toEqual(expected);
  });

  it.each<[string, Parameters<typeof preloadedNote>[1], Record<string, unknown> | undefined, string]>([
    [
      'loaded, with parameters',
      { content: 'Ask questions.', isError: false },
      { level: 2 },
      'The skill quiz is loaded for this turn:\n\nAsk questions.\n\nThe user gave these parameters for it: {"level":2}. ' +
        'Use them; its checkpoints propose them to the human.',
    ],
    [
      'loaded',
      { content: 'Ask questions.', isError: false },
      undefined,
      'The skill quiz is loaded for this turn:\n\nAsk questions.',
    ],
    [
      'not loaded',
      { content: 'No skill named quiz.', isError: true },
      { level: 2 },
      'The skill quiz could not be loaded: No skill named quiz.',
    ],
  ])('the note when it is %s', (_, loaded, params, note) => {
    expect(preloadedNote('quiz', loaded, params)).toBe(note);
  });
});
