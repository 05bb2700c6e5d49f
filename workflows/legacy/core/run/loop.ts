import { continueGuidance, emptyResponseGuidance } from '../guidance';
import { textOf, toolUsesOf, type ContentBlock, type ToolUseBlock } from '../messages';
import type { ModelResponse } from '../model';
import type { End, Verdict } from '../policy/types';
import { completeBlocksOf, responseKind } from '../response-kind';
import { answeredEnding, contextExceededEnding, emptyResponseEnding, refusalEnding, type Ending } from './endings';

/**
 * The agent loop's own decisions, as a pure reducer: what a model response means (a refusal, a full context window, a
 * pause, an answer cut by the output limit, an empty answer, tool calls, a final answer), when the conversation is
 * compacted, and what the policy's verdict on a final answer leads to. Workflow code performs the commands in order
 * (workflows/agent-loop.ts); each reduction ends with the one command that leads on: the next round, a model call,
 * the tool calls, the policy's word on the answer, or the end.
 */

export interface LoopState {
  /** Continuations of answers the output limit cut, so far in this run. */
  continuations: number;
  /** Empty responses answered with guidance, so far in this run. */
  emptyRetries: number;
  /** The text of the answers the output limit cut, which the final answer continues. */
  answerSoFar: string;
  /** The final answer the policy is asked about; null while none is. */
  proposed: string | null;
}

export interface LoopLimits {
  maxContinuations: number;
  maxEmptyRetries: number;
  /** The prompt's budget: the context window times the fraction of it a prompt may fill. */
  promptBudgetTokens: number;
}

export type LoopEvent =
  /** A round is about to call the model: its prompt's size, the fixed part (system, tools) and the conversation. */
  | { type: 'round.ready'; fixedTokens: number; messageTokens: number }
  | { type: 'model.responded'; response: Pick<ModelResponse, 'content' | 'stopReason'> }
  /** What the policy said to the final answer the loop proposed. */
  | { type: 'final.judged'; verdict: Verdict };

export type LoopCommand =
  /** Compact the conversation to at most `targetTokens`, the newest messages kept whole. */
  | { kind: 'compact'; targetTokens: number; keepRecentMessages: number }
  | { kind: 'call_model' }
  /** Append the response as it came (the worker that made the call holds it: replyMessageOf). */
  | { kind: 'append_reply'; content: ContentBlock[] }
  /** Append the whole blocks of a response the output limit cut. */
  | { kind: 'append_kept'; content: ContentBlock[] }
  /** Engine guidance for the model, as user text. */
  | { kind: 'add_note'; text: string }
  /** Text for the user: a `message` event. */
  | { kind: 'say'; text: string }
  | { kind: 'run_tools'; calls: ToolUseBlock[] }
  | { kind: 'propose_final'; text: string }
  /** The policy accepted a skill run's final answer as its declared output. */
  | { kind: 'keep_output'; value: unknown }
  | { kind: 'next_round' }
  | { kind: 'end'; ending: Ending }
  /** The policy ends the run (perhaps with a last word first). */
  | { kind: 'end_as_ruled'; end: End };

export interface LoopStep {
  state: LoopState;
  commands: LoopCommand[];
}

/** Compaction keeps the newest two messages whole (the round in progress and the one before it). */
const keepRecentMessages = 2;
/** Compaction brings the prompt down to this share of its budget. */
const compactedShare = 0.6;

export const newLoopState = (): LoopState => ({ continuations: 0, emptyRetries: 0, answerSoFar: '', proposed: null });

export function reduceLoop(state: LoopState, limits: LoopLimits, event: LoopEvent): LoopStep {
  switch (event.type) {
    case 'round.ready':
      return {
        state,
        commands: [...compaction(limits, event.fixedTokens, event.messageTokens), { kind: 'call_model' }],
      };
    case 'model.responded':
      return onResponse(state, limits, event.response);
    case 'final.judged':
      return onJudged(state, event.verdict);
  }
}

/** Over the prompt's budget, the conversation is compacted to a share of it (what the system and tools leave). */
function compaction(limits: LoopLimits, fixedTokens: number, messageTokens: number): LoopCommand[] {
  const budget = limits.promptBudgetTokens;
  if (fixedTokens + messageTokens <= budget) return [];
  return [{ kind: 'compact', targetTokens: Math.floor(budget * compactedShare) - fixedTokens, keepRecentMessages }];
}

function onResponse(state: LoopState, limits: LoopLimits, response: LoopEventResponse): LoopStep {
  const { content } = response;
  switch (responseKind(response)) {
    case 'refused':
      return { state, commands: [{ kind: 'end', ending: refusalEnding(textOf(content)) }] };
    case 'context_exceeded':
      return { state, commands: [{ kind: 'end', ending: contextExceededEnding() }] };
    case 'paused':
      return { state, commands: [{ kind: 'append_reply', content }, { kind: 'next_round' }] };
    case 'truncated':
      return onTruncated(state, limits, content);
    case 'empty':
      return onEmpty(state, limits);
    case 'tools': {
      const text = textOf(content);
      const said: LoopCommand[] = text.trim() ? [{ kind: 'say', text }] : [];
      return {
        state,
        commands: [{ kind: 'append_reply', content }, ...said, { kind: 'run_tools', calls: toolUsesOf(content) }],
      };
    }
    case 'final': {
      const proposed = state.answerSoFar + textOf(content);
      return {
        state: { ...state, proposed },
        commands: [
          { kind: 'append_reply', content },
          { kind: 'propose_final', text: proposed },
        ],
      };
    }
  }
}

type LoopEventResponse = Extract<LoopEvent, { type: 'model.responded' }>['response'];

/** An answer the output limit cut is continued, up to the limit; then what was written is the answer. */
function onTruncated(state: LoopState, limits: LoopLimits, content: ContentBlock[]): LoopStep {
  const kept = completeBlocksOf(content);
  const answerSoFar = state.answerSoFar + textOf(kept);
  if (state.continuations >= limits.maxContinuations) {
    return {
      state: { ...state, answerSoFar },
      commands: [
        { kind: 'say', text: answerSoFar },
        { kind: 'end', ending: answeredEnding(answerSoFar, 'max_tokens') },
      ],
    };
  }
  const appended: LoopCommand[] = kept.length > 0 ? [{ kind: 'append_kept', content: kept }] : [];
  return {
    state: { ...state, answerSoFar, continuations: state.continuations + 1 },
    commands: [...appended, { kind: 'add_note', text: continueGuidance }, { kind: 'next_round' }],
  };
}

/** An empty response gets guidance, up to the limit; then the run answers with a recovery message. */
function onEmpty(state: LoopState, limits: LoopLimits): LoopStep {
  if (state.emptyRetries >= limits.maxEmptyRetries) {
    const ending = emptyResponseEnding();
    return {
      state,
      commands: [
        { kind: 'say', text: ending.output },
        { kind: 'end', ending },
      ],
    };
  }
  return {
    state: { ...state, emptyRetries: state.emptyRetries + 1 },
    commands: [{ kind: 'add_note', text: emptyResponseGuidance }, { kind: 'next_round' }],
  };
}

/** The policy's word on the proposed answer: try again with its message, end as it rules, or the answer stands. */
function onJudged(state: LoopState, verdict: Verdict): LoopStep {
  const answer = state.proposed ?? '';
  const settled = { ...state, proposed: null };
  if (verdict.kind === 'refuse')
    return { state: settled, commands: [{ kind: 'add_note', text: verdict.message }, { kind: 'next_round' }] };
  if (verdict.kind === 'end') return { state: settled, commands: [{ kind: 'end_as_ruled', end: verdict }] };
  const kept: LoopCommand[] = verdict.output !== undefined ? [{ kind: 'keep_output', value: verdict.output }] : [];
  return {
    state: settled,
    commands: [...kept, { kind: 'say', text: answer }, { kind: 'end', ending: answeredEnding(answer) }],
  };
}
