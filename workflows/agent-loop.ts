import { replyMessageOf } from '../core/transcript';
import { compactMessages, estimateTokens } from '../core/compaction';
import { continueGuidance, emptyResponseGuidance } from '../core/guidance';
import {
  textOf,
  toolUsesOf,
  type ChatMessage,
  type ContentBlock,
  type TextBlock,
  type ToolDefinition,
} from '../core/messages';
import { tokensOf } from '../core/model';
import { protectedToolUseIds, registeredToolsInScope, type End } from '../core/policy';
import { hasDetail, toolDefinitionOf, type ToolSpec } from '../core/tools';
import { completeBlocksOf, responseKind } from '../core/response-kind';
import { answeredEnding, contextExceededEnding, emptyResponseEnding, refusalEnding } from '../core/run/endings';
import type { TurnResult } from '../core/turn';
import { callModel } from './model-call';
import { reserveRound, spend } from './spending';
import { dispatchToolCalls } from './tool-dispatch';
import { readGrantedDetails } from './tool-details';
import type { TurnTool } from './tool-types';
import type { TurnRun } from './turn-run';

export interface LoopContext {
  run: TurnRun;
  system: TextBlock[];
  tools: Map<string, TurnTool>;
}

/**
 * The agent loop: call the model, answer its tool calls in order, again, until it answers without tools. The policy
 * (run.decide) rules each round, each tool call and the final answer; every stop reason ends in a deliberate state;
 * the model's errors are the caller's to map.
 */
export async function runAgentLoop(context: LoopContext): Promise<TurnResult> {
  const { run } = context;
  let emptyRetries = 0;
  let continuations = 0;
  const answerParts: string[] = [];

  for (;;) {
    // The detail of the registered tools granted now that the run lacks (a catalog read by reference), before it offers them.
    await readGrantedDetails(run);
    // The tools of this round: they change only when another skill becomes active, so the cached prefix holds meanwhile.
    const definitions = offeredTools(context);
    const estimate = run.ledgerScope ? { estimate: roundEstimate(context, definitions) } : {};
    const round = run.decide({
      type: 'round.starting',
      at: Date.now(),
      tokens: tokensOf(run.state.usage),
      ...estimate,
    });
    if (round.kind === 'end') return await endTurn(context, definitions, round);
    const held = await reserveRound(run, round);
    if (held && 'kind' in held) return await endTurn(context, definitions, held);
    if (round.kind === 'allow' && round.note) appendUserText(run.messages, round.note);
    compactIfNeeded(context, definitions);
    const purpose = `round ${run.policy.roundsSinceHuman}`;
    const response = await spend(held, () => callModel(run, { system: context.system, tools: definitions, purpose }));
    const kind = responseKind(response);

    if (kind === 'refused') {
      return run.finish(refusalEnding(textOf(response.content)));
    }
    if (kind === 'context_exceeded') {
      return run.finish(contextExceededEnding());
    }
    if (kind === 'paused') {
      run.messages.push(replyMessageOf(response.content));
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
        const ending = emptyResponseEnding();
        run.emit({ type: 'message', text: ending.output });
        return run.finish(ending);
      }
      emptyRetries++;
      appendUserText(run.messages, emptyResponseGuidance);
      continue;
    }

    run.messages.push(replyMessageOf(response.content));
    const text = textOf(response.content);
    if (kind === 'tools') {
      if (text.trim()) run.emit({ type: 'message', text });
      const dispatched = await dispatchToolCalls(toolUsesOf(response.content), context.tools, run);
      run.messages.push({ role: 'user', content: dispatched.results });
      if (dispatched.end) return await endTurn(context, definitions, dispatched.end);
      continue;
    }

    const answer = answerParts.join('') + text;
    const verdict = run.decide({ type: 'final.proposed', text: answer });
    if (verdict.kind === 'refuse') {
      appendUserText(run.messages, verdict.message);
      continue;
    }
    if (verdict.kind === 'end') return await endTurn(context, definitions, verdict);
    // A skill run's final answer is its declared output: the policy accepted it, validated.
    if (verdict.output !== undefined) run.structuredOutput = { value: verdict.output };
    return finishWithAnswer(context, answer);
  }
}

/**
 * The engine's tools, then the registered tools the policy has in scope now, in the registry's order: only those the
 * active skill grants (the root: SKILLFLOW_DEFAULT_TOOLS), whatever else the catalog holds.
 */
export function offeredTools(context: LoopContext): ToolDefinition[] {
  const engine = [...context.tools.values()]
    .map((tool) => tool.spec)
    .filter((spec): spec is ToolSpec => spec.source === 'engine' && hasDetail(spec));
  return [...engine, ...registeredToolsInScope(context.run.policy)].map(toolDefinitionOf);
}

function finishWithAnswer(context: LoopContext, answer: string, cut?: 'max_tokens'): TurnResult {
  context.run.emit({ type: 'message', text: answer });
  return context.run.finish(answeredEnding(answer, cut));
}

/** Adds engine guidance as user text, merged into a trailing user message so roles keep alternating. */
export function appendUserText(messages: ChatMessage[], text: string): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'user') {
    const blocks: ContentBlock[] =
      typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
    blocks.push({ type: 'text', text });
    messages[messages.length - 1] = { role: 'user', content: blocks };
  } else {
    messages.push({ role: 'user', content: text });
  }
}

/** The tokens a round's request may take: its prompt as it stands (before any compaction), and its output limit. */
function roundEstimate(context: LoopContext, definitions: ToolDefinition[]): number {
  const { run } = context;
  const prompt =
    estimateTokens([context.system, definitions], run.charsPerToken) +
    Math.ceil(run.measure.jsonLength(run.messages) / run.charsPerToken);
  return prompt + (run.settings.maxTokens ?? 0);
}

/** Keeps the whole prompt (system, tools and messages) under the budget, compacting down to 60% of it when over. */
function compactIfNeeded(context: LoopContext, definitions: ToolDefinition[]): void {
  const { run } = context;
  const budget = run.settings.contextWindowTokens * run.settings.contextBudgetFraction;
  const fixed = estimateTokens([context.system, definitions], run.charsPerToken);
  if (fixed + Math.ceil(run.measure.jsonLength(run.messages) / run.charsPerToken) <= budget) return;
  const compacted = compactMessages(run.messages, {
    targetTokens: Math.floor(budget * 0.6) - fixed,
    keepRecentMessages: 2,
    protectedToolUseIds: protectedToolUseIds(run.policy),
    charsPerToken: run.charsPerToken,
  });
  run.messages = compacted.messages;
}

/** Ends the turn as the policy says; when it grants a last word, one more model call without tools gives the output. */
async function endTurn(context: LoopContext, definitions: ToolDefinition[], end: End): Promise<TurnResult> {
  const { run } = context;
  if (!end.lastWord) return run.finish(end.ending);
  const { guidance, purpose, fallback, compact } = end.lastWord;
  if (compact) {
    run.messages = compactMessages(run.messages, {
      targetTokens: 0,
      keepRecentMessages: 2,
      protectedToolUseIds: protectedToolUseIds(run.policy),
      charsPerToken: run.charsPerToken,
    }).messages;
  }
  appendUserText(run.messages, guidance);
  const response = await callModel(run, { system: context.system, tools: definitions, toolChoice: 'none', purpose });
  const output = textOf(response.content) || fallback;
  if (output) run.emit({ type: 'message', text: output });
  return run.finish({ ...end.ending, ...(output ? { output } : {}) });
}
