import type { CheckpointPlan, End, Verdict } from '../core/policy';
import { cancelledEnding, failedEnding } from '../core/run/endings';
import {
  allowedNextOf,
  callCommand,
  noteOf,
  roundCommands,
  type CallCommand,
  type RoundCommand,
} from '../core/run/verdicts';

/** The policy's verdicts as precise commands (core/run/verdicts.ts): workflow code switches on kinds, probes nothing. */
const ended: End = { kind: 'end', ending: failedEnding('plan_violations', 'The model broke the plan 3 times.') };
const ask: CheckpointPlan = {
  id: 'cp-1',
  name: 'confirm',
  kind: 'approval',
  summary: 'Go on?',
  params: null,
  paramsSchema: null,
  options: null,
  actions: ['approve', 'modify', 'cancel'],
  ttlMs: null,
  onTimeout: 'cancel',
  skill: null,
  depth: 0,
};

describe('a tool call, as the policy ruled it', () => {
  it.each<[string, Verdict, CallCommand]>([
    [
      'refused: an error result',
      { kind: 'refuse', code: 'refused', message: 'Not now.' },
      { kind: 'refuse_call', answer: { content: 'Not now.', isError: true } },
    ],
    [
      'the run ends on it: the failure is its result',
      ended,
      { kind: 'end_on_call', answer: { content: 'The model broke the plan 3 times.', isError: true }, end: ended },
    ],
    [
      'the run is cancelled on it',
      { kind: 'end', ending: cancelledEnding() },
      {
        kind: 'end_on_call',
        answer: { content: 'The turn ended.', isError: true },
        end: { kind: 'end', ending: cancelledEnding() },
      },
    ],
    ['a human first', { kind: 'allow', ask }, { kind: 'ask_human', checkpoint: ask }],
    [
      'run with the validated input and the allowance handed down',
      { kind: 'allow', input: { q: 'x', n: 1 }, handDown: { invocations: 2, tokens: null } },
      { kind: 'run_tool', input: { q: 'x', n: 1 }, allowance: { invocations: 2, tokens: null } },
    ],
    ['run as the model called it', { kind: 'allow' }, { kind: 'run_tool', input: { q: 'x' }, allowance: null }],
  ])('%s', (_, verdict, command) => {
    expect(callCommand(verdict, { q: 'x' })).toEqual(command);
  });
});

describe('a round, as the policy ruled it', () => {
  it.each<[string, Verdict, RoundCommand[]]>([
    ['ended', ended, [{ kind: 'end', end: ended }]],
    ['nothing first', { kind: 'allow' }, []],
    [
      'tokens reserved, then the deadline noted',
      { kind: 'allow', reserve: { tokens: 900, left: 5_000 }, note: 'The deadline passed.' },
      [
        { kind: 'reserve_tokens', tokens: 900, left: 5_000 },
        { kind: 'add_note', text: 'The deadline passed.' },
      ],
    ],
    ['refused (never, for a round): nothing first', { kind: 'refuse', code: 'refused', message: 'No.' }, []],
  ])('%s', (_, verdict, commands) => {
    expect(roundCommands(verdict)).toEqual(commands);
  });
});

describe("an allow's word for the model", () => {
  it.each<[Verdict, string | null, ReturnType<typeof allowedNextOf>]>([
    [{ kind: 'allow', note: 'Step limit reached.', allowedNext: [] }, 'Step limit reached.', []],
    [{ kind: 'allow', note: '' }, null, undefined],
    [{ kind: 'refuse', code: 'refused', message: 'No.' }, null, undefined],
  ])('%j', (verdict, note, allowedNext) => {
    expect(noteOf(verdict)).toBe(note);
    expect(allowedNextOf(verdict)).toEqual(allowedNext);
  });
});
