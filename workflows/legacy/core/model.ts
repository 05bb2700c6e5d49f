import type { ChatMessage, ContentBlock, TextBlock, ToolDefinition } from './messages';
import type { TranscriptDelta } from './transcript';
import type { Usage } from './schemas/turn';
import type { Effort } from './thinking';

export type StopReason =
  'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

/** One call to the model: everything the activity needs, as plain data. */
export interface ModelRequest {
  /** The turn (or skill run) the call belongs to: the worker keeps its conversation under it, and publishes its live deltas there. */
  turnId: string;
  /** A skill run's call: its live deltas go to its turn's stream instead, marked with the run's depth. */
  live?: { turnId: string; depth: number };
  /** The system prompt; absent when `promptRefs.system` names it. */
  system?: TextBlock[];
  /**
   * The system prompt and tool definitions by digest (core/transcript.ts `digestOf`), when an earlier call of this run
   * sent them whole: the worker resolves them, or answers TranscriptMiss and the run sends the call whole.
   */
  promptRefs?: { system?: string; tools?: string };
  /** The whole conversation; or, with `delta`, nothing and only what was added since the previous call. */
  messages?: ChatMessage[];
  delta?: TranscriptDelta;
  /** The tool definitions; absent when `promptRefs.tools` names them. */
  tools?: ToolDefinition[];
  /** Overrides the worker's configured model. */
  model?: string;
  maxTokens?: number;
  /** Whether to ask for thinking; absent: on when `thinkingBudgetTokens` is set (requests of older code). */
  thinking?: boolean;
  /** The budget for models that take only the budget form (core/thinking.ts). */
  thinkingBudgetTokens?: number;
  /** `output_config.effort`, for models that take it: the active skill's, else the configured one. */
  effort?: Effort;
  /** `none` lets the model see the tools (the history holds tool calls) but not call them. */
  toolChoice?: 'auto' | 'none';
}

export type { Usage };

export interface ModelResponse {
  id: string;
  model: string;
  content: ContentBlock[];
  stopReason: StopReason | null;
  usage: Usage;
}

export const zeroUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
});

/** All the tokens a model call processed (input, output, cache reads and writes): what a daily budget counts. */
export const tokensOf = (usage: Usage | undefined): number =>
  usage ? usage.inputTokens + usage.outputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens : 0;

export function addUsage(total: Usage, more: Usage): Usage {
  return {
    inputTokens: total.inputTokens + more.inputTokens,
    outputTokens: total.outputTokens + more.outputTokens,
    cacheReadInputTokens: total.cacheReadInputTokens + more.cacheReadInputTokens,
    cacheCreationInputTokens: total.cacheCreationInputTokens + more.cacheCreationInputTokens,
  };
}

/** Failure types the model activity raises; the workflow's retry policy and error mapping key on them. */
export const ModelErrorType = {
  /** 400, 413 and other requests the API will never accept as sent. */
  invalidRequest: 'ModelInvalidRequest',
  /** 401 / 403: the key is missing, wrong or lacks permission. */
  authentication: 'ModelAuthentication',
  /** 404: unknown model or endpoint. */
  notFound: 'ModelNotFound',
  /** 429, 529, 5xx, connection errors, timeouts: worth another attempt. */
  transient: 'ModelTransient',
} as const;

export const nonRetryableModelErrors: string[] = [
  ModelErrorType.invalidRequest,
  ModelErrorType.authentication,
  ModelErrorType.notFound,
];
