import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { withCacheBreakpoints } from '../core/cache-control';
import type { ChatMessage, TextBlock, ToolDefinition } from '../core/messages';
import { nonRetryableModelErrors, type ModelResponse } from '../core/model';
import type { TurnRun } from './turn-run';

const activityMargin = 30_000;

export interface ModelCallOptions {
  system: TextBlock[];
  tools: ToolDefinition[];
  messages?: ChatMessage[];
  toolChoice?: 'auto' | 'none';
  purpose: string;
}

/** One model call as an activity: cache breakpoints placed, usage added, the context estimate calibrated. */
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
      nonRetryableErrorTypes: nonRetryableModelErrors,
    },
  });
  const marked = withCacheBreakpoints(options.system, options.tools, options.messages ?? run.messages);
  run.state.modelCalls++;
  const response = await activities.callModel.executeWithOptions(
    { summary: `model call ${run.state.modelCalls}: ${options.purpose}` },
    [
      {
        turnId: run.input.turnId,
        system: marked.system,
        tools: marked.tools,
        messages: marked.messages,
        model: settings.model,
        maxTokens: settings.maxTokens,
        thinkingBudgetTokens: settings.thinkingBudgetTokens,
        toolChoice: options.toolChoice,
      },
    ],
  );
  run.addUsage(response.usage);
  const promptTokens = response.usage.inputTokens + response.usage.cacheReadInputTokens + response.usage.cacheCreationInputTokens;
  if (promptTokens > 0) {
    const promptChars = JSON.stringify([marked.system, marked.tools, marked.messages]).length;
    run.charsPerToken = Math.min(8, Math.max(1.5, promptChars / promptTokens));
  }
  return response;
}
