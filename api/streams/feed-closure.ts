import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { TerminalEvent } from '../../core/events';
import { searchAttributes } from '../../workflows/search-attributes';
import { endingOfClosedWorkflow, terminalEventOf } from '../turn-closure';
import { viewOf } from '../turn-view';

/**
 * What a feed learns from DescribeWorkflowExecution, which the server answers without the worker: whether its turn
 * closed, how it ended when its log cannot say, and the history length and status its describe check compares.
 */

const firstConfirmPauseMs = 50;
const maxConfirmPauseMs = 1_000;

/** How `awaitClosure` ended: the workflow closed; the caller's wait was over (`left`); or it still runs. */
export type ClosureWait = 'closed' | 'left' | 'running';

export interface ClosureWaitOptions {
  /** Describe again until this long has passed, after 50 ms, doubling to 1 s. */
  windowMs: number;
  sleep: (ms: number) => Promise<void>;
  /** Checked after each describe: the wait is over (the feed stopped, or the ending it confirms was dropped). */
  left: () => boolean;
  /** Checked after each pause: the wait is over, or something else wants the feed (a read). */
  interrupted: () => boolean;
}

/** Describes the turn until Temporal shows its workflow closed, the wait is left, or `windowMs` passed. */
export async function awaitClosure(client: Client, turnId: string, options: ClosureWaitOptions): Promise<ClosureWait> {
  const deadline = Date.now() + options.windowMs;
  for (let pause = firstConfirmPauseMs; ; pause = Math.min(pause * 2, maxConfirmPauseMs)) {
    const status = await client.workflow
      .getHandle(turnId)
      .describe()
      .then(
        (description) => description.status.name,
        () => null,
      );
    if (options.left()) return 'left';
    if (status !== null && status !== 'RUNNING') return 'closed';
    if (Date.now() + pause >= deadline) return 'running';
    await options.sleep(pause);
    if (options.interrupted()) return 'left';
  }
}

/** The turn's description; `gone` when Temporal no longer has it, undefined when it could not be asked. */
export async function describeTurn(
  client: Client,
  turnId: string,
): Promise<WorkflowExecutionDescription | 'gone' | undefined> {
  try {
    return await client.workflow.getHandle(turnId).describe();
  } catch (err) {
    return err instanceof WorkflowNotFoundError ? 'gone' : undefined;
  }
}

/** The turn's history length now, or undefined when describe failed. */
export function historyLengthOf(client: Client, turnId: string): Promise<number | undefined> {
  return client.workflow
    .getHandle(turnId)
    .describe()
    .then(
      (description) => description.historyLength,
      () => undefined,
    );
}

/** The turn's SkillflowStatus as described (a turn starts running without one). */
export function describedStatus(description: WorkflowExecutionDescription): string {
  return (description.typedSearchAttributes.get(searchAttributes.status) as string | undefined) ?? 'running';
}

/** The ending of a turn Temporal no longer has (deleted). */
export function goneEnding(turnId: string): TerminalEvent {
  return { type: 'error', code: 'not_found', message: `Turn ${turnId} no longer exists.` };
}

/**
 * The terminal event of a closed turn whose log has none, and when it ended; null when it cannot be told now. A closure
 * other than COMPLETED and FAILED (terminated, timed out, cancelled) is derived from the status. A turn that completed,
 * or ended `failed` (its workflow Failed), always logs its ending; when its log has none or cannot be read (no worker
 * to replay it), its result says how it ended: read only when `fromResult` (viewOf reads any other failure as
 * workflow_failed).
 */
export async function closedTurnEnding(
  client: Client,
  turnId: string,
  description: WorkflowExecutionDescription,
  fromResult: boolean,
): Promise<{ body: TerminalEvent; at: Date } | null> {
  const status = description.status.name;
  if (status !== 'COMPLETED' && status !== 'FAILED') {
    return { body: terminalEventOf(endingOfClosedWorkflow(status)), at: description.closeTime ?? new Date() };
  }
  if (!fromResult) return null;
  const view = await viewOf(client, turnId, description).catch(() => null);
  if (!view) return null;
  return { body: terminalEventOf(view), at: description.closeTime ?? new Date() };
}
