import { compactMessages, estimateTokens } from '../core/compaction';
import {
  contextExceededMessage,
  continueGuidance,
  emptyRecoveryAnswer,
  emptyResponseGuidance,
  refusalMessage,
  roundBudgetGuidance,
  cancelledGuidance,
} from '../core/guidance';
import { textOf, toolUsesOf, type ChatMessage, type ContentBlock, type TextBlock, type ToolDefinition } from '../core/messages';
import { completeBlocksOf, responseKind } from '../core/response-kind';
import type { TurnResult } from '../core/turn';
import { callModel } from './model-call';
import { dispatchToolCalls } from './tool-dispatch';
import type { TurnTool } from './tool-types';
import type { TurnEnding, TurnRun } from './turn-run';

/** What the step orchestrator (or nothing) says at the loop's decision points. */
export interface LoopGuard {
  /** A message that refuses the final answer and keeps the loop going, or an ending, or undefined to accept it. */
  reviewFinal(text: string): string | TurnEnding | undefined;
  /** The ending when the round budget runs out; undefined lets the loop give a final answer without tools. */
  onRoundBudgetExhausted(): TurnEnding | undefined;
  /** Tool results compaction must keep whole (the current step's instructions). */
  protectedToolUseIds(): ReadonlySet<string>;
  /** A note for the model before the next call (a plan deadline that passed), or undefined. */
  beforeRound?(): string | undefined;
}

export const noGuard: LoopGuard = {
  reviewFinal: () => undefined,
  onRoundBudgetExhausted: () => undefined,
  protectedToolUseIds: () => new Set(),
};

export interface LoopContext {
  run: TurnRun;
  system: TextBlock[];
  tools: Map<string, TurnTool>;
  guard: LoopGuard;
}

/**
 * The agent loop: call the model, answer its tool calls in order, again, until it answers without tools. Every
 * stop reason ends in a deliberate state; the model's errors are the caller's to map.
 */
export async function runAgentLoop(context: LoopContext): Promise<TurnResult> {
  const { run } = context;
  const definitions = [...context.tools.values()].map((tool) => tool.definition);
  let roundsSinceHuman = 0;
  let emptyRetries = 0;
  let continuations = 0;
  const answerParts: string[] = [];

  for (;;) {
    if (roundsSinceHuman >= run.settings.maxRounds) return await roundBudgetExhausted(context, definitions);
    const note = context.guard.beforeRound?.();
    if (note) appendUserText(run.messages, note);
    compactIfNeeded(context, definitions);
    const response = await callModel(run, { system: context.system, tools: definitions, purpose: `round ${roundsSinceHuman + 1}` });
    roundsSinceHuman++;
    const kind = responseKind(response);

    if (kind === 'refused') {
      return run.finish({ status: 'failed', reason: 'refusal', output: textOf(response.content) || undefined, error: { code: 'refusal', message: refusalMessage } });
    }
    if (kind === 'context_exceeded') {
      return run.finish({ status: 'failed', reason: 'context_window_exceeded', error: { code: 'context_window_exceeded', message: contextExceededMessage } });
    }
    if (kind === 'paused') {
      run.messages.push({ role: 'assistant', content: response.content });
      continue;
    }
    if (kind === 'truncated') {
      const kept = completeBlocksOf(response.content);
      const text = textOf(kept);
      if (text) answerParts.push(text);
      if (continuations >= run.settings.maxContinuations) {
        return finishWithAnswer(context, answerParts.join(''), 'max_tokens');
      }
      continuations++;
      if (kept.length > 0) run.messages.push({ role: 'assistant', content: kept });
      appendUserText(run.messages, continueGuidance);
      continue;
    }
    if (kind === 'empty') {
      if (emptyRetries >= run.settings.maxEmptyRetries) {
        run.emit({ type: 'message', text: emptyRecoveryAnswer });
        return run.finish({ status: 'completed', reason: 'empty_response', output: emptyRecoveryAnswer });
      }
      emptyRetries++;
      appendUserText(run.messages, emptyResponseGuidance);
      continue;
    }

    run.messages.push({ role: 'assistant', content: response.content });
    const text = textOf(response.content);
    if (kind === 'tools') {
      if (text.trim()) run.emit({ type: 'message', text });
      const dispatched = await dispatchToolCalls(toolUsesOf(response.content), context.tools, run);
      run.messages.push({ role: 'user', content: dispatched.results });
      if (dispatched.humanDecision) roundsSinceHuman = 0;
      if (dispatched.endTurn) return run.finish(dispatched.endTurn);
      if (dispatched.cancelled) return await explainCancellation(context, definitions);
      continue;
    }

    const verdict = context.guard.reviewFinal(text);
    if (typeof verdict === 'string') {
      appendUserText(run.messages, verdict);
      continue;
    }
    if (verdict) return run.finish(verdict);
    answerParts.push(text);
    return finishWithAnswer(context, answerParts.join(''));
  }
}

function finishWithAnswer(context: LoopContext, answer: string, reason?: string): TurnResult {
  context.run.emit({ type: 'message', text: answer });
  return context.run.finish({ status: 'completed', output: answer, ...(reason ? { reason } : {}) });
}

/** Adds engine guidance as user text, merged into a trailing user message so roles keep alternating. */
export function appendUserText(messages: ChatMessage[], text: string): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'user') {
    const blocks: ContentBlock[] = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
    blocks.push({ type: 'text', text });
    messages[messages.length - 1] = { role: 'user', content: blocks };
  } else {
    messages.push({ role: 'user', content: text });
  }
}

/** Keeps the whole prompt (system, tools and messages) under the budget, compacting down to 60% of it when over. */
function compactIfNeeded(context: LoopContext, definitions: ToolDefinition[]): void {
  const { run } = context;
  const budget = run.settings.contextWindowTokens * run.settings.contextBudgetFraction;
  const fixed = estimateTokens([context.system, definitions], run.charsPerToken);
  if (fixed + estimateTokens(run.messages, run.charsPerToken) <= budget) return;
  const compacted = compactMessages(run.messages, {
    targetTokens: Math.floor(budget * 0.6) - fixed,
    keepRecentMessages: 2,
    protectedToolUseIds: context.guard.protectedToolUseIds(),
    charsPerToken: run.charsPerToken,
  });
  run.messages = compacted.messages;
}

async function roundBudgetExhausted(context: LoopContext, definitions: ToolDefinition[]): Promise<TurnResult> {
  const ending = context.guard.onRoundBudgetExhausted();
  if (ending) return context.run.finish(ending);
  const { run } = context;
  run.messages = compactMessages(run.messages, {
    targetTokens: 0,
    keepRecentMessages: 2,
    protectedToolUseIds: context.guard.protectedToolUseIds(),
    charsPerToken: run.charsPerToken,
  }).messages;
  const text = await lastWordWithoutTools(context, definitions, roundBudgetGuidance, 'final answer without tools');
  return finishWithAnswer(context, text || emptyRecoveryAnswer, 'max_rounds');
}

async function explainCancellation(context: LoopContext, definitions: ToolDefinition[]): Promise<TurnResult> {
  const text = await lastWordWithoutTools(context, definitions, cancelledGuidance, 'explain the cancellation');
  if (text) context.run.emit({ type: 'message', text });
  return context.run.finish({ status: 'cancelled', reason: 'cancelled_by_user', output: text || undefined });
}

/** One more model call that may see the tools (the history holds tool calls) but not use them. */
async function lastWordWithoutTools(context: LoopContext, definitions: ToolDefinition[], guidance: string, purpose: string): Promise<string> {
  appendUserText(context.run.messages, guidance);
  const response = await callModel(context.run, { system: context.system, tools: definitions, toolChoice: 'none', purpose });
  return textOf(response.content);
}
