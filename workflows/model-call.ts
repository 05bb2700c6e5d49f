import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ChatMessage, TextBlock, ToolDefinition } from '../core/messages';
import { nonRetryableModelErrors, type ModelRequest, type ModelResponse } from '../core/model';
import type { Effort } from '../core/thinking';
import { digestOf, digestOfJson, elideRepeated, transcriptMissType, type TranscriptDelta } from '../core/transcript';
import type { TurnRun } from './turn-run';

const activityMargin = 30_000;

export interface ModelCallOptions {
  system: TextBlock[];
  tools: ToolDefinition[];
  toolChoice?: 'auto' | 'none';
  purpose: string;
}

/**
 * One model call as an activity. The activity input carries only the messages added since the previous call (the
 * worker keeps the rest), so a long exam's history grows with what is new, not with the whole conversation each round.
 */
export async function callModel(run: TurnRun, options: ModelCallOptions): Promise<ModelResponse> {
  const settings = run.settings;
  const activities = proxyActivities<Activities>({
    startToCloseTimeout: settings.modelTimeoutMs + activityMargin,
    heartbeatTimeout: 60_000,
    retry: {
      maximumAttempts: settings.modelMaxAttempts,
      initialInterval: settings.modelRetryInitialMs ?? 2_000,
      backoffCoefficient: 2,
      maximumInterval: 60_000,
      nonRetryableErrorTypes: [...nonRetryableModelErrors, transcriptMissType],
    },
  });
  const messages = run.messages;
  const base: ModelRequest = {
    turnId: run.input.turnId,
    ...(run.depth > 0 ? { live: { turnId: run.place.rootTurnId, depth: run.depth } } : {}),
    system: options.system,
    tools: options.tools,
    model: settings.model,
    maxTokens: settings.maxTokens,
    ...(settings.thinking !== undefined ? { thinking: settings.thinking } : {}),
    thinkingBudgetTokens: settings.thinkingBudgetTokens,
    effort: activeSkillEffort(run) ?? settings.effort,
    toolChoice: options.toolChoice,
  };
  run.state.modelCalls++;
  const summary = `model call ${run.state.modelCalls}: ${options.purpose}`;
  const delta = deltaSince(run, messages);
  const prompt = promptDigests(options);
  const lean = leanPrompt(base, prompt, run.sentPrompt);
  let response: ModelResponse;
  try {
    response = await activities.callModel.executeWithOptions({ summary }, [
      delta ? { ...lean, delta } : { ...lean, messages },
    ]);
  } catch (err) {
    if ((!delta && lean === base) || !isTranscriptMiss(err)) throw err;
    response = await activities.callModel.executeWithOptions({ summary: `${summary} (whole conversation)` }, [
      { ...base, messages },
    ]);
  }
  run.synced = { count: messages.length, digest: run.measure.digest(messages), reply: response.content };
  run.sentPrompt = prompt;
  run.addUsage(response.usage);
  calibrate(run, base, messages, response);
  return response;
}

/** The effort the active skill names (its `metadata.effort`), if any. */
function activeSkillEffort(run: TurnRun): Effort | undefined {
  const active = run.policy.active?.name;
  return (active === undefined ? undefined : run.pinned.loaded[active]?.manifest.effort) ?? undefined;
}

const promptDigestCache = new WeakMap<object, string>();
const digestOnce = (value: object) =>
  promptDigestCache.get(value) ?? promptDigestCache.set(value, digestOf(value)).get(value)!;

/**
 * The loop rebuilds its tool definitions every round, nearly always the same: the digest of the last JSON text seen is
 * kept, since hashing the text costs more than comparing it (about a millisecond a round in the workflow sandbox while
 * the hash read the global `Math.imul` twice a character).
 */
let lastTools = { json: '', digest: '' };

export function toolsDigest(tools: ToolDefinition[]): string {
  const json = JSON.stringify(tools);
  if (json !== lastTools.json) lastTools = { json, digest: digestOfJson(json) };
  return lastTools.digest;
}

function promptDigests(options: ModelCallOptions): { system: string; tools: string } {
  return { system: digestOnce(options.system), tools: toolsDigest(options.tools) };
}

/** The request without the parts the worker already holds for this run, named by digest instead; `base` when none. */
function leanPrompt(base: ModelRequest, prompt: TurnRun['sentPrompt'], sent: TurnRun['sentPrompt']): ModelRequest {
  if (!prompt || !sent) return base;
  const sameSystem = prompt.system === sent.system;
  const sameTools = prompt.tools === sent.tools;
  if (!sameSystem && !sameTools) return base;
  const { system, tools, ...rest } = base;
  return {
    ...rest,
    ...(sameSystem ? {} : { system }),
    ...(sameTools ? {} : { tools }),
    promptRefs: { ...(sameSystem ? { system: prompt.system } : {}), ...(sameTools ? { tools: prompt.tools } : {}) },
  };
}

/**
 * What the worker lacks of the conversation. With `byReference`, it starts after the previous response when the loop
 * appended it as it came (`replyMessageOf`: the worker holds it), and tool results repeating earlier ones go by digest.
 */
function deltaSince(run: TurnRun, messages: ChatMessage[]): TranscriptDelta | undefined {
  const base = heldWithReply(run, messages) ?? heldBase(run, messages);
  if (!base) return undefined;
  const append = messages.slice(base.count);
  const repeated = run.measure.repeatedResults(messages, base.count);
  if (repeated.length === 0) return { baseCount: base.count, baseDigest: base.digest, append };
  return { baseCount: base.count, baseDigest: base.digest, append: elideRepeated(append, repeated), repeated };
}

/** The conversation of the previous call, when `messages` still begins with it. */
function heldBase(run: TurnRun, messages: ChatMessage[]): { count: number; digest: string } | undefined {
  const { synced } = run;
  if (!synced || synced.count > messages.length || synced.count === 0) return undefined;
  return run.measure.digest(messages, synced.count) === synced.digest
    ? { count: synced.count, digest: synced.digest }
    : undefined;
}

/** The previous call's conversation and its response, when the loop appended that response unchanged. */
function heldWithReply(run: TurnRun, messages: ChatMessage[]): { count: number; digest: string } | undefined {
  const held = heldBase(run, messages);
  const reply = messages[held?.count ?? -1];
  if (!held || !run.synced?.reply || reply?.role !== 'assistant' || reply.content !== run.synced.reply)
    return undefined;
  return { count: held.count + 1, digest: run.measure.digest(messages, held.count + 1) };
}

function isTranscriptMiss(err: unknown): boolean {
  return (
    err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === transcriptMissType
  );
}

/** Characters per token, from the usage the API reports: the context estimate stays honest for any model. */
function calibrate(run: TurnRun, request: ModelRequest, messages: ChatMessage[], response: ModelResponse): void {
  const promptTokens =
    response.usage.inputTokens + response.usage.cacheReadInputTokens + response.usage.cacheCreationInputTokens;
  if (promptTokens <= 0) return;
  // JSON.stringify([system, tools, messages]).length, with the conversation's part measured once per message.
  const promptChars =
    JSON.stringify(request.system).length +
    JSON.stringify(request.tools ?? null).length +
    run.measure.jsonLength(messages) +
    4;
  run.charsPerToken = Math.min(8, Math.max(1.5, promptChars / promptTokens));
}
