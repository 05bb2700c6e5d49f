import { Context } from '@temporalio/activity';
import type { ModelDeltaEvent, ModelDeps } from '../activities/model';
import type { Config } from '../lib/config';
import type { LiveChannel, LiveEvent } from '../lib/live';
import type { SharedStore } from '../lib/store';

export function modelDepsFrom(
  config: Config,
  live?: LiveChannel,
  store?: SharedStore,
  log?: (line: string) => void,
): ModelDeps {
  return {
    store,
    log,
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxTokens: config.modelMaxTokens,
    timeoutMs: config.modelTimeoutMs,
    ...(live ? { publishDelta: livePublisher(live) } : {}),
  };
}

/**
 * Publishes the model's deltas on the live channel, stamped with the model call (its activity id) and attempt, so
 * clients can tell a retried call's text from the partial text of the attempt that failed.
 */
export function livePublisher(live: LiveChannel): NonNullable<ModelDeps['publishDelta']> {
  return (turnId: string, delta: ModelDeltaEvent) => {
    const event: LiveEvent = {
      type: delta.type,
      text: delta.text,
      ...currentCall(delta.depth),
      ...(delta.depth ? { depth: delta.depth } : {}),
    };
    live.publish(turnId, event);
  };
}

/** The call's activity id (a skill run's prefixed with its workflow id: activity ids are per workflow) and attempt. */
function currentCall(depth: number | undefined): { call?: string; attempt?: number } {
  try {
    const { activityId, attempt, workflowExecution } = Context.current().info;
    return { call: depth && workflowExecution ? `${workflowExecution.workflowId}#${activityId}` : activityId, attempt };
  } catch {
    return {};
  }
}
