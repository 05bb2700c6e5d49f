import { replyMessageOf } from '../core/transcript';
import { compactMessages, estimateTokens } from '../core/compaction';
import { textOf, type ChatMessage, type ContentBlock, type TextBlock, type ToolDefinition } from '../core/messages';
import { tokensOf } from '../core/model';
import { protectedToolUseIds, registeredToolsInScope, type End } from '../core/policy';
import { hasDetail, toolDefinitionOf, type ToolSpec } from '../core/tools';
import {
  newLoopState,
  reduceLoop,
  type LoopCommand,
  type LoopEvent,
  type LoopLimits,
  type LoopState,
} from '../core/run/loop';
import { roundCommands } from '../core/run/verdicts';
import type { TurnResult } from '../core/turn';
import { callModel } from './model-call';
import { reserveRound, spend, type Held } from './spending';
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
 * (run.decide) rules each round, each tool call and the final answer; what each response means is the loop machine's
 * (core/run/loop.ts), whose commands this code performs in order; the model's errors are the caller's to map.
 */
export async function runAgentLoop(context: LoopContext): Promise<TurnResult> {
  const { run } = context;
  const limits: LoopLimits = {
    maxContinuations: run.settings.maxContinuations,
    maxEmptyRetries: run.settings.maxEmptyRetries,
    promptBudgetTokens: run.settings.contextWindowTokens * run.settings.contextBudgetFraction,
  };
  const round: Round = { loop: newLoopState(), limits, definitions: [], held: undefined };
  for (;;) {
    const started = await startRound(context, round);
    if ('result' in started) return started.result;
    let event: LoopEvent = started.ready;
    for (;;) {
      const step = reduceLoop(round.loop, limits, event);
      round.loop = step.state;
      const next = await perform(context, round, step.commands);
      if ('result' in next) return next.result;
      if (next.kind === 'next_round') break;
      event = next.event;
    }
  }
}

/** A round in progress: the loop machine's state, and the tools offered and tokens held for this round's model call. */
interface Round {
  loop: LoopState;
  limits: LoopLimits;
  definitions: ToolDefinition[];
  held: Held | undefined;
}

/** What performing a step's commands leads to: the run's result, the next round, or the next event for the machine. */
type Next = { result: TurnResult } | { kind: 'next_round' } | { kind: 'event'; event: LoopEvent };

/**
 * Before a round's model call: the detail of the tools it offers, the policy's word on the round (and the tokens the
 * ledger holds for it), and the prompt's size for the loop machine.
 */
async function startRound(context: LoopContext, round: Round): Promise<{ result: TurnResult } | { ready: LoopEvent }> {
  const { run } = context;
  // The detail of the registered tools granted now that the run lacks (a catalog read by reference), before it offers them.
  await readGrantedDetails(run);
  // The tools of this round: they change only when another skill becomes active, so the cached prefix holds meanwhile.
  const definitions = offeredTools(context);
  round.definitions = definitions;
  const estimate = run.ledgerScope ? { estimate: roundEstimate(context, definitions) } : {};
  const verdict = run.decide({
    type: 'round.starting',
    at: Date.now(),
    tokens: tokensOf(run.state.usage),
    ...estimate,
  });
  round.held = undefined;
  for (const command of roundCommands(verdict)) {
    switch (command.kind) {
      case 'end':
        return { result: await endTurn(context, definitions, command.end) };
      case 'reserve_tokens': {
        const reserved = await reserveRound(run, command);
        if (reserved.kind === 'end') return { result: await endTurn(context, definitions, reserved) };
        round.held = reserved.held;
        break;
      }
      case 'add_note':
        appendUserText(run.messages, command.text);
        break;
    }
  }
  const fixedTokens = estimateTokens([context.system, definitions], run.charsPerToken);
  const messageTokens = Math.ceil(run.measure.jsonLength(run.messages) / run.charsPerToken);
  return { ready: { type: 'round.ready', fixedTokens, messageTokens } };
}

/** Performs a step's commands in order; the last one leads on. */
async function perform(context: LoopContext, round: Round, commands: LoopCommand[]): Promise<Next> {
  const { run } = context;
  for (const command of commands) {
    switch (command.kind) {
      case 'compact':
        run.messages = compactMessages(run.messages, {
          targetTokens: command.targetTokens,
          keepRecentMessages: command.keepRecentMessages,
          protectedToolUseIds: protectedToolUseIds(run.policy),
          charsPerToken: run.charsPerToken,
        }).messages;
        break;
      case 'append_reply':
        run.messages.push(replyMessageOf(command.content));
        break;
      case 'append_kept':
        run.messages.push({ role: 'assistant', content: command.content });
        break;
      case 'add_note':
        appendUserText(run.messages, command.text);
        break;
      case 'say':
        run.emit({ type: 'message', text: command.text });
        break;
      case 'keep_output':
        run.structuredOutput = { value: command.value };
        break;
      case 'call_model': {
        const purpose = `round ${run.policy.roundsSinceHuman}`;
        const options = { system: context.system, tools: round.definitions, purpose };
        const response = await spend(round.held, () => callModel(run, options));
        return { kind: 'event', event: { type: 'model.responded', response } };
      }
      case 'run_tools': {
        const dispatched = await dispatchToolCalls(command.calls, context.tools, run);
        run.messages.push({ role: 'user', content: dispatched.results });
        if (dispatched.end) return { result: await endTurn(context, round.definitions, dispatched.end) };
        return { kind: 'next_round' };
      }
      case 'propose_final': {
        const verdict = run.decide({ type: 'final.proposed', text: command.text });
        return { kind: 'event', event: { type: 'final.judged', verdict } };
      }
      case 'next_round':
        return { kind: 'next_round' };
      case 'end':
        return { result: run.finish(command.ending) };
      case 'end_as_ruled':
        return { result: await endTurn(context, round.definitions, command.end) };
    }
  }
  throw new Error('A loop step ended without a command that leads on.');
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
