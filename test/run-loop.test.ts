import { continueGuidance, emptyResponseGuidance } from '../core/guidance';
import type { ContentBlock, ToolUseBlock } from '../core/messages';
import type { StopReason } from '../core/model';
import type { End, Verdict } from '../core/policy';
import {
  answeredEnding,
  contextExceededEnding,
  emptyResponseEnding,
  failedEnding,
  refusalEnding,
} from '../core/run/endings';
import {
  newLoopState,
  reduceLoop,
  type LoopCommand,
  type LoopEvent,
  type LoopLimits,
  type LoopState,
} from '../core/run/loop';

/**
 * The agent loop's own decisions (core/run/loop.ts) as a table: a loop state, an event, and the state and commands it
 * must give, in order. `npm run test:policy-coverage` checks that these cover every branch of core/run/.
 */
const limits: LoopLimits = { maxContinuations: 2, maxEmptyRetries: 1, promptBudgetTokens: 1000 };
const text = (value: string): ContentBlock => ({ type: 'text', text: value });
const call = (id: string): ToolUseBlock => ({ type: 'tool_use', id, name: 'lookup', input: { q: id } });
const responded = (stopReason: StopReason | null, ...content: ContentBlock[]): LoopEvent => ({
  type: 'model.responded',
  response: { stopReason, content },
});
const judged = (verdict: Verdict): LoopEvent => ({ type: 'final.judged', verdict });
const state = (overrides: Partial<LoopState> = {}): LoopState => ({ ...newLoopState(), ...overrides });
const planEnd: End = { kind: 'end', ending: failedEnding('plan_violations', 'Broke the plan.') };

describe('the loop machine', () => {
  it.each<[string, LoopState, LoopEvent, LoopState, LoopCommand[]]>([
    [
      'a prompt within its budget: the model is called',
      state(),
      { type: 'round.ready', fixedTokens: 400, messageTokens: 600 },
      state(),
      [{ kind: 'call_model' }],
    ],
    [
      'a prompt over its budget: compacted to 60% of it, what the system and tools leave, first',
      state(),
      { type: 'round.ready', fixedTokens: 400, messageTokens: 601 },
      state(),
      [{ kind: 'compact', targetTokens: 200, keepRecentMessages: 2 }, { kind: 'call_model' }],
    ],
    [
      'a refusal ends the run with what the model said',
      state(),
      responded('refusal', text('I will not.')),
      state(),
      [{ kind: 'end', ending: refusalEnding('I will not.') }],
    ],
    [
      'a full context window ends the run',
      state(),
      responded('model_context_window_exceeded'),
      state(),
      [{ kind: 'end', ending: contextExceededEnding() }],
    ],
    [
      'a pause sends the content back as it is',
      state(),
      responded('pause_turn', text('Searching')),
      state(),
      [{ kind: 'append_reply', content: [text('Searching')] }, { kind: 'next_round' }],
    ],
    [
      'a cut answer is continued: its whole blocks kept, a cut tool call dropped',
      state({ answerSoFar: 'Once ' }),
      responded('max_tokens', text('upon'), text(''), call('cut')),
      state({ answerSoFar: 'Once upon', continuations: 1 }),
      [
        { kind: 'append_kept', content: [text('upon')] },
        { kind: 'add_note', text: continueGuidance },
        { kind: 'next_round' },
      ],
    ],
    [
      'a cut answer with nothing whole is continued without appending',
      state(),
      responded('max_tokens', call('cut')),
      state({ continuations: 1 }),
      [{ kind: 'add_note', text: continueGuidance }, { kind: 'next_round' }],
    ],
    [
      'past the continuations allowed, what was written is the answer (max_tokens)',
      state({ answerSoFar: 'Once upon', continuations: 2 }),
      responded('max_tokens', text(' a time')),
      state({ answerSoFar: 'Once upon a time', continuations: 2 }),
      [
        { kind: 'say', text: 'Once upon a time' },
        { kind: 'end', ending: answeredEnding('Once upon a time', 'max_tokens') },
      ],
    ],
    [
      'an empty response gets guidance',
      state(),
      responded('end_turn', text('  ')),
      state({ emptyRetries: 1 }),
      [{ kind: 'add_note', text: emptyResponseGuidance }, { kind: 'next_round' }],
    ],
    [
      'past the retries allowed, the run answers with a recovery message',
      state({ emptyRetries: 1 }),
      responded('end_turn'),
      state({ emptyRetries: 1 }),
      [
        { kind: 'say', text: emptyResponseEnding().output },
        { kind: 'end', ending: emptyResponseEnding() },
      ],
    ],
    [
      'tool calls with text: the text is said, then the calls run',
      state(),
      responded('tool_use', text('Let me look.'), call('a'), call('b')),
      state(),
      [
        { kind: 'append_reply', content: [text('Let me look.'), call('a'), call('b')] },
        { kind: 'say', text: 'Let me look.' },
        { kind: 'run_tools', calls: [call('a'), call('b')] },
      ],
    ],
    [
      'tool calls without text',
      state(),
      responded('tool_use', text(' '), call('a')),
      state(),
      [
        { kind: 'append_reply', content: [text(' '), call('a')] },
        { kind: 'run_tools', calls: [call('a')] },
      ],
    ],
    [
      'a final answer, continuing what the output limit cut, goes to the policy',
      state({ answerSoFar: 'Once upon' }),
      responded('end_turn', text(' a time.')),
      state({ answerSoFar: 'Once upon', proposed: 'Once upon a time.' }),
      [
        { kind: 'append_reply', content: [text(' a time.')] },
        { kind: 'propose_final', text: 'Once upon a time.' },
      ],
    ],
    [
      'the policy refuses the answer: its message, and another round',
      state({ proposed: 'Done.' }),
      judged({ kind: 'refuse', code: 'refused', message: 'The plan is not complete.' }),
      state(),
      [{ kind: 'add_note', text: 'The plan is not complete.' }, { kind: 'next_round' }],
    ],
    [
      'the policy ends the run',
      state({ proposed: 'Done.' }),
      judged(planEnd),
      state(),
      [{ kind: 'end_as_ruled', end: planEnd }],
    ],
    [
      'the policy accepts the answer',
      state({ answerSoFar: 'Once', proposed: 'Once upon a time.' }),
      judged({ kind: 'allow' }),
      state({ answerSoFar: 'Once' }),
      [
        { kind: 'say', text: 'Once upon a time.' },
        { kind: 'end', ending: answeredEnding('Once upon a time.') },
      ],
    ],
    [
      "the policy accepts a skill run's answer as its declared output",
      state({ proposed: '{"score": 3}' }),
      judged({ kind: 'allow', output: { score: 3 } }),
      state(),
      [
        { kind: 'keep_output', value: { score: 3 } },
        { kind: 'say', text: '{"score": 3}' },
        { kind: 'end', ending: answeredEnding('{"score": 3}') },
      ],
    ],
    [
      'a verdict with no answer proposed accepts an empty one',
      state(),
      judged({ kind: 'allow' }),
      state(),
      [
        { kind: 'say', text: '' },
        { kind: 'end', ending: answeredEnding('') },
      ],
    ],
  ])('%s', (_, before, event, after, commands) => {
    const step = reduceLoop(before, limits, event);
    expect(step.state).toEqual(after);
    expect(step.commands).toEqual(commands);
  });

  it('ends every step with the one command that leads on, last', () => {
    const leading = new Set(['call_model', 'run_tools', 'propose_final', 'next_round', 'end', 'end_as_ruled']);
    const events: LoopEvent[] = [
      { type: 'round.ready', fixedTokens: 900, messageTokens: 900 },
      responded('end_turn', text('Hi')),
      responded('tool_use', call('a')),
      responded('max_tokens', text('a')),
      responded('pause_turn'),
      judged({ kind: 'allow' }),
    ];
    for (const event of events) {
      const { commands } = reduceLoop(newLoopState(), limits, event);
      expect(commands.filter((command) => leading.has(command.kind))).toEqual([commands[commands.length - 1]]);
    }
  });
});
