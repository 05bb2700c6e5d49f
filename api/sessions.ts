import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Static } from '@sinclair/typebox';
import { sessionWorkflowId } from '../core/turn';
import { closeSessionUpdate, sessionStateQuery, turnStateQuery } from '../workflows/definitions';
import { searchAttributes } from '../workflows/search-attributes';
import type { SessionState, TurnRecord } from '../workflows/session-types';
import type { Caller } from './auth';
import { notFound } from './errors';
import type { SessionSummary, SessionView } from './schemas';
import { canSee } from './turn-view';
import { listAll, listPage, quoted } from './visibility';

const queryDeadlineMs = 5_000;

/** The session's workflow, when it is open and the caller may see it (anything else is a 404). */
export async function describeVisibleSession(client: Client, caller: Caller, sessionId: string): Promise<WorkflowExecutionDescription> {
  try {
    const description = await client.workflow.getHandle(sessionWorkflowId(sessionId)).describe();
    if (description.status.name !== 'RUNNING' || !canSee(caller, description.typedSearchAttributes.get(searchAttributes.user))) {
      throw notFound(`Session ${sessionId}`);
    }
    return description;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw notFound(`Session ${sessionId}`);
    throw err;
  }
}

export async function readSession(client: Client, caller: Caller, sessionId: string): Promise<Static<typeof SessionView>> {
  await describeVisibleSession(client, caller, sessionId);
  const state = await client.connection.withDeadline(Date.now() + queryDeadlineMs, () =>
    client.workflow.getHandle(sessionWorkflowId(sessionId)).query(sessionStateQuery),
  );
  const turns = state.turns.map(turnOf);
  const active = turns.find((turn) => turn.id === state.activeTurnId);
  if (active) {
    // The session records "running" for its active turn; the turn itself knows whether it waits for a human.
    const live = await client.connection
      .withDeadline(Date.now() + queryDeadlineMs, () => client.workflow.getHandle(active.id).query(turnStateQuery))
      .catch(() => undefined);
    if (live) Object.assign(active, { status: live.status, reason: live.reason ?? null });
  }
  return { id: state.sessionId, userId: state.userId, createdAt: state.createdAt, activeTurnId: state.activeTurnId ?? null, turns };
}

function turnOf(record: TurnRecord) {
  return {
    id: record.id,
    number: record.number,
    message: record.message,
    skill: record.skill ?? null,
    status: record.status,
    reason: record.reason ?? null,
    output: record.output ?? null,
    error: record.error ?? null,
    createdAt: record.createdAt,
    endedAt: record.endedAt ?? null,
  };
}

/** Open sessions, newest first: the caller's own, or for operators everyone's (or one user's). */
export async function listSessions(client: Client, caller: Caller, filter: { user?: string; limit?: number; cursor?: string }) {
  const user = caller.operator ? filter.user : caller.id;
  const query = [`WorkflowType = 'sessionWorkflow'`, `ExecutionStatus = 'Running'`, ...(user ? [`SkillflowUser = ${quoted(user)}`] : [])].join(' AND ');
  const page = await listPage(client, query, filter.limit ?? 20, filter.cursor);
  const sessions: Static<typeof SessionSummary>[] = page.executions.map((execution) => ({
    id: execution.workflowId.slice('session-'.length),
    userId: execution.attributes.get(searchAttributes.user) ?? '',
    createdAt: execution.startTime.toISOString(),
  }));
  return { sessions, nextCursor: page.nextCursor };
}

/**
 * Closes the session (which cancels a running or waiting turn and waits for it to end), then deletes the session's
 * workflows, every run of it and every turn, from Temporal, and waits until they are gone so that reads 404 at once.
 */
export async function deleteSession(client: Client, caller: Caller, sessionId: string, timeoutMs: number): Promise<void> {
  await describeVisibleSession(client, caller, sessionId);
  const handle = client.workflow.getHandle(sessionWorkflowId(sessionId));
  await handle.executeUpdate(closeSessionUpdate, { args: [{ by: caller.id }] }).catch((err: unknown) => {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  });
  const final = (await handle.result().catch(() => undefined)) as SessionState | undefined;
  const listed = await listAll(client, `SkillflowSession = ${quoted(sessionId)}`);
  const targets = new Map<string, string | undefined>();
  for (const turn of final?.turns ?? []) targets.set(turn.id, undefined);
  for (const execution of listed) targets.set(`${execution.workflowId}\u0000${execution.runId}`, execution.runId);
  targets.set(sessionWorkflowId(sessionId), undefined);

  const namespace = client.options.namespace;
  await Promise.all(
    [...targets].map(([key, runId]) =>
      client.workflowService
        .deleteWorkflowExecution({ namespace, workflowExecution: { workflowId: key.split('\u0000')[0], runId } })
        .catch((err: { code?: number }) => {
          if (err.code !== 5) throw err;
        }),
    ),
  );
  const ids = new Set([...targets.keys()].map((key) => key.split('\u0000')[0]));
  await waitUntilGone(client, [...ids], timeoutMs);
}

async function waitUntilGone(client: Client, workflowIds: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let remaining = workflowIds;
  while (remaining.length > 0 && Date.now() < deadline) {
    const exists = await Promise.all(
      remaining.map((id) =>
        client.workflow
          .getHandle(id)
          .describe()
          .then(
            () => true,
            (err: unknown) => !(err instanceof WorkflowNotFoundError),
          ),
      ),
    );
    remaining = remaining.filter((_, i) => exists[i]);
    if (remaining.length > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
