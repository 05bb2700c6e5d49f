import {
  WorkflowFailedError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { pendingCheckpointOf } from '../core/checkpoints';
import { zeroUsage } from '../core/model';
import type { TurnEvent } from '../core/events';
import { snapshotAgrees, type DescribedPosition, type TurnSnapshot } from '../core/turn-snapshot';
import { sessionWorkflowId, type TurnResult, type TurnState, type TurnStatus } from '../core/turn';
import { isWorkflowOfKind, turnEventsQuery, turnStateQuery } from '../workflows/definitions';
import { searchAttributes } from '../workflows/search-attributes';
import type { Caller } from './caller';
import { notFound } from './errors';
import type { TurnView } from '../core/protocol';
import { endingOfClosedWorkflow } from './turn-closure';
import { closedTurnOutcome } from './turn-result';
import { queryDeadlineMs } from './deadlines';

/** Where the API finds the state a turn's worker last published (the live channel), so reads need not query. */
export interface TurnStates {
  latestState(turnId: string): Promise<TurnSnapshot | undefined>;
}

export function sessionIdOfTurn(turnId: string): string {
  return turnId.slice('turn-'.length, turnId.lastIndexOf('-'));
}

export function canSee(caller: Caller, owner: string | undefined): boolean {
  return caller.operator || owner === caller.id;
}

/**
 * The turn's workflow, if it exists, the caller may see it, and its session has not been deleted. Deleting a session
 * terminates it and removes it and its turns, but Temporal removes closed executions in the background: a terminated
 * session is what says its turns are gone. Anything else is a 404, never a 403.
 */
export async function describeVisibleTurn(
  client: Client,
  caller: Caller,
  turnId: string,
): Promise<WorkflowExecutionDescription> {
  const exists = (err: unknown) => {
    if (err instanceof WorkflowNotFoundError) throw notFound(`Turn ${turnId}`);
    throw err;
  };
  const [description, session] = await Promise.all([
    client.workflow.getHandle(turnId).describe().catch(exists),
    client.workflow
      .getHandle(sessionWorkflowId(sessionIdOfTurn(turnId)))
      .describe()
      .catch(exists),
  ]);
  const visible =
    isWorkflowOfKind('turn', description.type) &&
    canSee(caller, description.typedSearchAttributes.get(searchAttributes.user));
  if (!visible || session.status.name === 'TERMINATED') {
    throw notFound(`Turn ${turnId}`);
  }
  return description;
}

/**
 * The state the turn's worker last published, when it shows the caller may see the turn without describing it: the
 * state names the turn's user (anyone else gets a 404, as from describeVisibleTurn), and its session, described (the
 * one thing a turn's state cannot tell), is not terminated. Undefined when no state is kept (none published yet,
 * expired, or the live channel's store unreachable): then describeVisibleTurn decides. The state may be stale: it
 * stands for who owns the turn, never for whether it still runs.
 */
export async function publishedVisibleTurn(
  client: Client,
  caller: Caller,
  turnId: string,
  states: TurnStates | undefined,
): Promise<TurnState | undefined> {
  const published = await states?.latestState(turnId).catch(() => undefined);
  if (!published || published.state.turnId !== turnId) return undefined;
  const session = await client.workflow
    .getHandle(sessionWorkflowId(sessionIdOfTurn(turnId)))
    .describe()
    .catch((err: unknown) => {
      if (err instanceof WorkflowNotFoundError) throw notFound(`Turn ${turnId}`);
      throw err;
    });
  if (!canSee(caller, published.state.userId) || session.status.name === 'TERMINATED') throw notFound(`Turn ${turnId}`);
  return published.state;
}

/** Reads a turn: the state its worker published (or its live state) while it runs, its result or failure once closed. */
export async function readTurn(client: Client, caller: Caller, turnId: string, states?: TurnStates): Promise<TurnView> {
  const description = await describeVisibleTurn(client, caller, turnId);
  return viewOf(client, turnId, description, states);
}

/** The turn's durable event log after `after` (the `turnEvents` query, which also answers for a closed turn). */
export async function readTurnLog(client: Client, caller: Caller, turnId: string, after: number): Promise<TurnEvent[]> {
  await describeVisibleTurn(client, caller, turnId);
  return client.connection.withDeadline(Date.now() + queryDeadlineMs, () =>
    client.workflow.getHandle(turnId).query(turnEventsQuery, after),
  );
}

/**
 * The turn as a TurnView. A running turn shows the state its worker last published when that agrees with what
 * describe says (core/turn-snapshot.ts), so a read costs the worker nothing; else (none kept, or it lags or leads the
 * search attributes) the `turnState` query, once.
 */
export async function viewOf(
  client: Client,
  turnId: string,
  description: WorkflowExecutionDescription,
  states?: TurnStates,
): Promise<TurnView> {
  const handle = client.workflow.getHandle(turnId);
  const base = {
    id: turnId,
    sessionId: sessionIdOfTurn(turnId),
    workflowId: turnId,
    createdAt: description.startTime.toISOString(),
    updatedAt: (description.closeTime ?? description.startTime).toISOString(),
  };
  const empty = {
    output: null,
    pendingCheckpoint: null,
    error: null,
    skill: null,
    step: null,
    usage: zeroUsage(),
    skills: [],
    artifacts: [],
  };
  switch (description.status.name) {
    case 'RUNNING': {
      const state = await runningTurnState(client, handle, description, states);
      if (state) return { ...base, ...fromState(state) };
      const status =
        (description.typedSearchAttributes.get(searchAttributes.status) as TurnStatus | undefined) ?? 'running';
      return { ...base, ...empty, status, reason: null };
    }
    case 'COMPLETED':
    case 'FAILED': {
      // A turn that ended `failed` fails its workflow with its result: it reads as a completed one does.
      const outcome = await closedTurnOutcome(handle);
      if ('result' in outcome) return { ...base, ...fromResult(outcome.result) };
      return { ...base, ...empty, ...endingOfClosedWorkflow('FAILED', failureMessage(outcome.failure)) };
    }
    default:
      return { ...base, ...empty, ...endingOfClosedWorkflow(description.status.name) };
  }
}

/**
 * A running turn's state without loading its worker when it can: the state its worker last published, when it is of
 * `description`'s run and agrees with its search attributes (core/turn-snapshot.ts); else (none kept, it lags or leads
 * them, or it is of a run since reset) the `turnState` query, once. Undefined when that fails too (no worker
 * answering). `description` is of `handle`'s turn.
 */
export async function runningTurnState(
  client: Client,
  handle: WorkflowHandle,
  description: WorkflowExecutionDescription,
  states: TurnStates | undefined,
): Promise<TurnState | undefined> {
  const published = await states?.latestState(handle.workflowId).catch(() => undefined);
  if (published && snapshotAgrees(published, positionOf(description))) return published.state;
  return client.connection
    .withDeadline(Date.now() + queryDeadlineMs, () => handle.query(turnStateQuery))
    .catch(() => undefined);
}

function positionOf(description: WorkflowExecutionDescription): DescribedPosition {
  const attribute = (key: (typeof searchAttributes)[keyof typeof searchAttributes]) =>
    (description.typedSearchAttributes.get(key) as string | undefined) ?? null;
  return {
    runId: description.runId,
    status: attribute(searchAttributes.status),
    checkpoint: attribute(searchAttributes.checkpoint),
    skill: attribute(searchAttributes.skill),
    step: attribute(searchAttributes.step),
  };
}

function fromState(state: TurnState) {
  return {
    status: state.status,
    reason: state.reason ?? null,
    output: state.output ?? null,
    pendingCheckpoint: state.pendingCheckpoint ? pendingCheckpointOf(state.pendingCheckpoint) : null,
    error: state.error ?? null,
    skill: state.skill ?? null,
    step: state.step ?? null,
    usage: state.usage,
    skills: state.skills ?? [],
    artifacts: state.artifacts ?? [],
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
    skill: result.skill ?? null,
    step: result.step ?? null,
    usage: result.usage,
    skills: result.skills ?? [],
    artifacts: result.artifacts ?? [],
  };
}

function failureMessage(err: unknown): string {
  if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure) return err.cause.message;
  if (err instanceof WorkflowFailedError && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}
