import { WorkflowFailedError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { zeroUsage } from '../core/model';
import type { TurnResult, TurnState, TurnStatus } from '../core/turn';
import { turnStateQuery } from '../workflows/definitions';
import { searchAttributes } from '../workflows/search-attributes';
import type { Caller } from './auth';
import { notFound } from './errors';
import type { TurnView } from './schemas';

const queryDeadlineMs = 5_000;

export function sessionIdOfTurn(turnId: string): string {
  return turnId.slice('turn-'.length, turnId.lastIndexOf('-'));
}

export function canSee(caller: Caller, owner: string | undefined): boolean {
  return caller.operator || owner === caller.id;
}

/** Reads a turn from Temporal: the live state while it runs, its result or failure once closed. */
export async function readTurn(client: Client, caller: Caller, turnId: string): Promise<TurnView> {
  const handle = client.workflow.getHandle(turnId);
  let description: WorkflowExecutionDescription;
  try {
    description = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw notFound(`Turn ${turnId}`);
    throw err;
  }
  if (description.type !== 'turnWorkflow' || !canSee(caller, description.typedSearchAttributes.get(searchAttributes.user))) {
    throw notFound(`Turn ${turnId}`);
  }
  const base = {
    id: turnId,
    sessionId: sessionIdOfTurn(turnId),
    workflowId: turnId,
    createdAt: description.startTime.toISOString(),
    updatedAt: (description.closeTime ?? description.startTime).toISOString(),
  };
  switch (description.status.name) {
    case 'RUNNING': {
      const state = await client.connection
        .withDeadline(Date.now() + queryDeadlineMs, () => handle.query(turnStateQuery))
        .catch(() => undefined);
      if (state) return { ...base, ...fromState(state) };
      const status = (description.typedSearchAttributes.get(searchAttributes.status) as TurnStatus | undefined) ?? 'running';
      return { ...base, status, reason: null, output: null, pendingCheckpoint: null, error: null, usage: zeroUsage() };
    }
    case 'COMPLETED': {
      const result = (await handle.result()) as TurnResult;
      return { ...base, ...fromResult(result) };
    }
    case 'FAILED': {
      const message = await handle.result().then(
        () => 'The turn failed.',
        (err: unknown) => failureMessage(err),
      );
      return { ...base, status: 'failed', reason: 'workflow_failed', output: null, pendingCheckpoint: null, error: { code: 'workflow_failed', message }, usage: zeroUsage() };
    }
    case 'TERMINATED':
      return { ...base, status: 'failed', reason: 'terminated', output: null, pendingCheckpoint: null, error: { code: 'terminated', message: 'The turn was terminated in Temporal.' }, usage: zeroUsage() };
    case 'TIMED_OUT':
      return { ...base, status: 'failed', reason: 'timed_out', output: null, pendingCheckpoint: null, error: { code: 'timed_out', message: 'The turn timed out in Temporal.' }, usage: zeroUsage() };
    case 'CANCELLED':
      return { ...base, status: 'cancelled', reason: 'cancelled', output: null, pendingCheckpoint: null, error: null, usage: zeroUsage() };
    default:
      return { ...base, status: 'failed', reason: description.status.name.toLowerCase(), output: null, pendingCheckpoint: null, error: null, usage: zeroUsage() };
  }
}

function fromState(state: TurnState) {
  return {
    status: state.status,
    reason: state.reason ?? null,
    output: state.output ?? null,
    pendingCheckpoint: state.pendingCheckpoint ?? null,
    error: state.error ?? null,
    usage: state.usage,
    updatedAt: state.updatedAt,
  };
}

function fromResult(result: TurnResult) {
  return {
    status: result.status,
    reason: result.reason ?? null,
    output: result.output ?? null,
    pendingCheckpoint: null,
    error: result.error ?? null,
    usage: result.usage,
  };
}

function failureMessage(err: unknown): string {
  if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure) return err.cause.message;
  if (err instanceof WorkflowFailedError && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}
