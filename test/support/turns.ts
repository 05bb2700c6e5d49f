import { randomBytes } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultTurnSettings, type TurnSettings } from '../../core/settings';
import type { TurnInput, TurnResult } from '../../core/turn';
import type { CheckpointDecision, PendingCheckpoint } from '../../core/checkpoints';
import { answerCheckpointUpdate, turnEventsQuery, turnStateQuery, workflowTypes } from '../../workflows/definitions';
import type { turnWorkflow } from '../../workflows/turn';
import { closedTurnOutcome } from '../../api/turn-result';
import { examDecision } from './exam-script';

export const fastSettings: TurnSettings = {
  ...defaultTurnSettings,
  modelMaxAttempts: 3,
  modelRetryInitialMs: 100,
  modelTimeoutMs: 20_000,
};

export type TurnOverrides = Partial<Omit<TurnInput, 'settings'>> & { settings?: Partial<TurnSettings> };

/**
 * Starts a turn workflow directly (no session), for tests of the loop itself; of the current code unless `type` names
 * the legacy type (a worker on a frozen bundle registers only that).
 */
export async function startTurn(
  client: Client,
  taskQueue: string,
  message: string,
  overrides: TurnOverrides = {},
  type: string = workflowTypes.turn,
): Promise<WorkflowHandle<typeof turnWorkflow>> {
  const sessionId = randomBytes(10).toString('hex');
  const turnId = `turn-${sessionId}-1`;
  const { settings, ...rest } = overrides;
  const input: TurnInput = {
    turnId,
    sessionId,
    userId: 'tester',
    message,
    history: [],
    createdAt: new Date().toISOString(),
    ...rest,
    settings: { ...fastSettings, ...settings },
  };
  return client.workflow.start<typeof turnWorkflow>(type, {
    workflowId: turnId,
    taskQueue,
    args: [input],
  });
}

export async function runTurn(
  client: Client,
  taskQueue: string,
  message: string,
  overrides: TurnOverrides = {},
): Promise<{ result: TurnResult; events: Awaited<ReturnType<typeof eventsOf>> }> {
  const handle = await startTurn(client, taskQueue, message, overrides);
  const result = await resultOf(handle);
  return { result, events: await eventsOf(handle) };
}

export async function eventsOf(handle: WorkflowHandle) {
  return handle.query(turnEventsQuery, 0);
}

/** The turn's next pending checkpoint other than `afterId`, or undefined once the turn has ended. */
export async function nextCheckpoint(
  handle: WorkflowHandle,
  afterId?: string,
  timeoutMs = 30_000,
): Promise<PendingCheckpoint | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await handle.query(turnStateQuery);
    if (state.pendingCheckpoint && state.pendingCheckpoint.id !== afterId) return state.pendingCheckpoint;
    if (['completed', 'failed', 'cancelled'].includes(state.status)) return undefined;
    if (Date.now() > deadline)
      throw new Error(
        `no checkpoint after ${afterId ?? 'the start'} within ${timeoutMs / 1000} s; the turn is ${state.status}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits for the turn's next pending checkpoint (other than `afterId`) and answers it through the update. */
export async function answerNext(
  handle: WorkflowHandle,
  decision: Omit<CheckpointDecision, 'checkpointId'>,
  afterId?: string,
  timeoutMs = 30_000,
): Promise<PendingCheckpoint> {
  const pending = await nextCheckpoint(handle, afterId, timeoutMs);
  if (!pending) throw new Error('turn ended while waiting for a checkpoint');
  await handle.executeUpdate(answerCheckpointUpdate, {
    args: [{ ...decision, checkpointId: pending.id, by: 'tester' }],
  });
  return pending;
}

/** Answers every checkpoint of an exam turn (test/support/exam-script.ts) as its script expects, to the turn's end. */
export async function answerExam(handle: WorkflowHandle): Promise<PendingCheckpoint[]> {
  const asked: PendingCheckpoint[] = [];
  for (let pending = await nextCheckpoint(handle); pending; pending = await nextCheckpoint(handle, pending.id)) {
    await handle.executeUpdate(answerCheckpointUpdate, {
      args: [{ ...examDecision(pending), checkpointId: pending.id, by: 'tester' }],
    });
    asked.push(pending);
  }
  return asked;
}

/** The turn's result as the session and the API read it, also for a turn that ended `failed` (its workflow Failed). */
export async function resultOf(handle: WorkflowHandle): Promise<TurnResult> {
  const outcome = await closedTurnOutcome(handle);
  if ('result' in outcome) return outcome.result;
  throw outcome.failure;
}
