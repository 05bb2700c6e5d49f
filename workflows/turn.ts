import {
  ApplicationFailure,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  CancellationScope,
  ActivityFailure,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { EventLog } from '../core/event-log';
import { textOf, type ChatMessage } from '../core/messages';
import { addUsage, nonRetryableModelErrors, zeroUsage } from '../core/model';
import type { TurnError, TurnInput, TurnResult, TurnState, TurnStatus } from '../core/turn';
import { turnEventsQuery, turnStateQuery } from './definitions';
import { searchAttributes } from './search-attributes';
import { basePrompt } from '../core/prompts';

export function historyMessages(input: TurnInput): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const exchange of input.history) {
    messages.push({ role: 'user', content: exchange.user }, { role: 'assistant', content: exchange.assistant || '(no answer)' });
  }
  messages.push({ role: 'user', content: input.message });
  return messages;
}

export async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  const now = () => new Date().toISOString();
  const log = new EventLog(now);
  const state: TurnState = {
    turnId: input.turnId,
    sessionId: input.sessionId,
    userId: input.userId,
    status: 'running',
    usage: zeroUsage(),
    modelCalls: 0,
    createdAt: input.createdAt,
    updatedAt: now(),
  };
  setHandler(turnStateQuery, () => state);
  setHandler(turnEventsQuery, (afterOffset: number) => log.after(afterOffset));

  const setStatus = (status: TurnStatus, reason?: string) => {
    state.status = status;
    state.reason = reason;
    state.updatedAt = now();
    upsertSearchAttributes([{ key: searchAttributes.status, value: status }]);
    log.append({ type: 'status', status, ...(reason ? { reason } : {}) });
  };
  const finish = (result: Omit<TurnResult, 'turnId' | 'usage'>): TurnResult => {
    state.output = result.output;
    state.error = result.error;
    setStatus(result.status, result.reason);
    if (result.status === 'completed') log.append({ type: 'done', output: result.output ?? '' });
    else if (result.status === 'cancelled') log.append({ type: 'cancelled', reason: result.reason ?? 'cancelled' });
    else log.append({ type: 'error', code: result.error?.code ?? 'failed', message: result.error?.message ?? 'The turn failed.' });
    return { turnId: input.turnId, usage: state.usage, ...result };
  };

  log.append({ type: 'status', status: 'running' });
  const model = proxyActivities<Activities>({
    startToCloseTimeout: input.settings.modelTimeoutMs,
    heartbeatTimeout: 60_000,
    retry: {
      maximumAttempts: input.settings.modelMaxAttempts,
      initialInterval: 2_000,
      backoffCoefficient: 2,
      maximumInterval: 60_000,
      nonRetryableErrorTypes: nonRetryableModelErrors,
    },
  });

  const messages = historyMessages(input);
  try {
    state.modelCalls++;
    const response = await model.callModel({
      turnId: input.turnId,
      system: [{ type: 'text', text: basePrompt }],
      messages,
      model: input.settings.model,
      maxTokens: input.settings.maxTokens,
    });
    state.usage = addUsage(state.usage, response.usage);
    const text = textOf(response.content);
    log.append({ type: 'message', text });
    return finish({ status: 'completed', output: text });
  } catch (err) {
    if (isCancellation(err)) {
      return await CancellationScope.nonCancellable(async () => finish({ status: 'cancelled', reason: 'cancelled' }));
    }
    return finish({ status: 'failed', reason: 'model_error', error: describeFailure(err) });
  }
}

function describeFailure(err: unknown): TurnError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { code: cause.type ?? 'ApplicationFailure', message: cause.message };
  if (err instanceof Error) return { code: err.name, message: err.message };
  return { code: 'unknown', message: String(err) };
}
