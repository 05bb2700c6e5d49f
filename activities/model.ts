import Anthropic from '@anthropic-ai/sdk';
import type { MessageStreamParams } from '@anthropic-ai/sdk/resources';
import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { withCacheBreakpoints } from '../core/cache-control';
import type { ChatMessage, ContentBlock, TextBlock } from '../core/messages';
import { ModelErrorType, type ModelRequest, type ModelResponse } from '../core/model';
import { thinkingParamsFor } from '../core/thinking';
import { replyMessageOf } from '../core/transcript';
import { classifyModelError, modelFailure } from './model-errors';
import type { SharedStore } from '../lib/store';
import { PromptStore } from './prompt-store';
import { TranscriptStore } from './transcript-store';

/** A piece of streamed text; `depth` when it comes from a skill run (published on its turn's stream). */
export type ModelDeltaEvent = { type: 'message.delta' | 'thinking.delta'; text: string; depth?: number };

export interface ModelDeps {
  apiKey?: string;
  baseURL?: string;
  model: string;
  maxTokens: number;
  /** Bounds the wait for the response headers and, once streaming, the silence between two stream events. */
  timeoutMs: number;
  /** Live preview only: what it returns is ignored, and a throw or a rejected promise is swallowed. */
  publishDelta?: (turnId: string, event: ModelDeltaEvent) => unknown;
  /** Where workers share conversations, so any worker can run any call of a turn; absent: this worker's memory only. */
  store?: SharedStore;
  log?: (line: string) => void;
}

const heartbeatEveryMs = 500;
/**
 * The most time between two of a running activity's heartbeats reaching the server (the worker's
 * maxHeartbeatThrottleInterval; Core sends the first heartbeat at once, later ones at most this often). A cancel reaches
 * a running model call only in a heartbeat's answer, so this bounds how late a cancelled turn's model call stops.
 */
export const heartbeatThrottleMs = 2_000;
/** Sent when only a base URL is configured (a gateway that authenticates on its own), so the SDK constructs. */
const placeholderApiKey = 'skillflow-no-api-key';

export function createModelActivities(deps: ModelDeps) {
  const client = new Anthropic({
    apiKey: deps.apiKey || placeholderApiKey,
    baseURL: deps.baseURL ?? null,
    maxRetries: 0,
    timeout: deps.timeoutMs,
  });

  const transcripts = new TranscriptStore(deps.store, { log: deps.log });
  const prompts = new PromptStore(deps.store);

  async function callModel(request: ModelRequest): Promise<ModelResponse> {
    if (!deps.apiKey && !deps.baseURL) {
      throw modelFailure(ModelErrorType.authentication, 'No Anthropic API key configured: set ANTHROPIC_API_KEY.');
    }
    const context = Context.current();
    const [messages, prompt] = await Promise.all([
      transcripts.resolve(request.turnId, request.messages, request.delta),
      prompts.resolve(request),
    ]);
    const promptShared = prompts.share(request, prompt);
    const marked = withCacheBreakpoints(prompt.system, prompt.tools, messages);
    const params = toParams({ ...request, ...marked }, deps);
    const stream = client.messages.stream(params, { signal: context.cancellationSignal });
    const watch = watchStream(context, deps.timeoutMs, () => stream.abort());
    const liveTurn = request.live?.turnId ?? request.turnId;
    const located = request.live ? { depth: request.live.depth } : {};
    try {
      for await (const event of stream) {
        watch.sawEvent();
        if (event.type !== 'content_block_delta') continue;
        if (event.delta.type === 'text_delta')
          publish(liveTurn, { type: 'message.delta', text: event.delta.text, ...located });
        if (event.delta.type === 'thinking_delta')
          publish(liveTurn, { type: 'thinking.delta', text: event.delta.thinking, ...located });
      }
      const response = toModelResponse(await stream.finalMessage());
      // The turn's next call may run on any worker: it must find this conversation, and this response, in the store.
      await promptShared;
      await transcripts.rememberReply(request, messages, replyMessageOf(response.content));
      return response;
    } catch (err) {
      if (context.cancellationSignal.aborted) throw cancellationOf(context.cancellationSignal);
      if (watch.stalled) {
        throw modelFailure(ModelErrorType.transient, `Anthropic API stream sent nothing for ${deps.timeoutMs} ms`);
      }
      throw classifyModelError(err);
    } finally {
      watch.stop();
    }
  }

  function publish(turnId: string, event: ModelDeltaEvent): void {
    if (!deps.publishDelta) return;
    try {
      void Promise.resolve(deps.publishDelta(turnId, event)).catch(() => undefined);
    } catch {
      // Deltas are a live preview only: losing one must not fail the model call.
    }
  }

  return { callModel };
}

function toParams(
  request: ModelRequest & { messages: ChatMessage[]; system: TextBlock[] },
  deps: ModelDeps,
): MessageStreamParams {
  const params: MessageStreamParams = {
    model: request.model ?? deps.model,
    max_tokens: request.maxTokens ?? deps.maxTokens,
    messages: request.messages,
  };
  if (request.system.length > 0) params.system = request.system;
  if (request.tools && request.tools.length > 0) {
    params.tools = request.tools;
    if (request.toolChoice) params.tool_choice = { type: request.toolChoice };
  }
  const thinking = request.thinking ?? (request.thinkingBudgetTokens ?? 0) > 0;
  const { thinking: thinkingParam, output_config } = thinkingParamsFor(params.model, {
    thinking,
    ...(request.thinkingBudgetTokens ? { budgetTokens: request.thinkingBudgetTokens } : {}),
    ...(request.effort ? { effort: request.effort } : {}),
    maxTokens: params.max_tokens,
  });
  if (thinkingParam) params.thinking = thinkingParam;
  if (output_config) params.output_config = output_config;
  return params;
}

/**
 * Heartbeats at most every `heartbeatEveryMs` once the call has run `heartbeatThrottleMs`, and aborts a stream that stays
 * silent too long. No heartbeat before then: the first would reach the server at once, an RPC that a call ending within
 * the throttle interval does not need, and a cancel still reaches the call within that interval (the same bound as
 * after the first heartbeat). The 60 s heartbeat timeout (workflows/model-call.ts) leaves ample room for the delay.
 */
function watchStream(context: Context, idleTimeoutMs: number, abort: () => void) {
  const startedAt = Date.now();
  let lastBeat = 0;
  let lastEvent = startedAt;
  const state = { stalled: false };
  const beat = () => {
    const now = Date.now();
    if (now - startedAt < heartbeatThrottleMs || now - lastBeat < heartbeatEveryMs) return;
    lastBeat = now;
    context.heartbeat();
  };
  const timer = setInterval(() => {
    beat();
    if (Date.now() - lastEvent > idleTimeoutMs) {
      state.stalled = true;
      abort();
    }
  }, heartbeatEveryMs);
  return {
    get stalled() {
      return state.stalled;
    },
    sawEvent() {
      lastEvent = Date.now();
      beat();
    },
    stop: () => clearInterval(timer),
  };
}

function cancellationOf(signal: AbortSignal): CancelledFailure {
  return signal.reason instanceof CancelledFailure ? signal.reason : new CancelledFailure('Model call cancelled');
}

function toModelResponse(message: Anthropic.Message): ModelResponse {
  return {
    id: message.id,
    model: message.model,
    content: message.content.flatMap(toContentBlock),
    stopReason: message.stop_reason,
    usage: {
      inputTokens: message.usage.input_tokens ?? 0,
      outputTokens: message.usage.output_tokens ?? 0,
      cacheReadInputTokens: message.usage.cache_read_input_tokens ?? 0,
      cacheCreationInputTokens: message.usage.cache_creation_input_tokens ?? 0,
    },
  };
}

/** Keeps only the fields the conversation needs, as plain JSON; block types skillflow never requests are dropped. */
function toContentBlock(block: Anthropic.ContentBlock): ContentBlock[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: block.text }];
    case 'tool_use':
      return [{ type: 'tool_use', id: block.id, name: block.name, input: plainJson(block.input ?? {}) }];
    case 'thinking':
      return [{ type: 'thinking', thinking: block.thinking, signature: block.signature }];
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: block.data }];
    default:
      return [];
  }
}

function plainJson(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}
