import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Static } from '@sinclair/typebox';
import { sessionWorkflowId } from '../core/turn';
import { sessionStateQuery, workflowTypeClause } from '../workflows/definitions';
import { searchAttributes } from '../workflows/search-attributes';
import type { TurnRecord } from '../workflows/session-types';
import type { Caller } from './caller';
import type { PageCursors } from './cursors';
import { notFound } from './errors';
import type { SessionSummary, SessionView } from '../core/protocol';
import { canSee, viewOf, type TurnStates } from './turn-view';
import { listAll, listPage, quoted } from './visibility';
import { cancelWaitMs, queryDeadlineMs } from './deadlines';

/** The session's workflow, when it is open and the caller may see it (anything else is a 404). */
export async function describeVisibleSession(
  client: Client,
  caller: Caller,
  sessionId: string,
): Promise<WorkflowExecutionDescription> {
  try {
    const description = await client.workflow.getHandle(sessionWorkflowId(sessionId)).describe();
    if (
      description.status.name !== 'RUNNING' ||
      !canSee(caller, description.typedSearchAttributes.get(searchAttributes.user))
    ) {
      throw notFound(`Session ${sessionId}`);
    }
    return description;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw notFound(`Session ${sessionId}`);
    throw err;
  }
}

/**
 * The session with its recent turns. The session records "running" for its active turn; the turn itself knows whether
 * it waits for a human, and is read as GET /v1/turns/:id reads it (viewOf: while it runs, the state its worker
 * published when that agrees with describe, else one `turnState` query, else its SkillflowStatus; once it ended, its
 * result), so reading a session need not load the turn's worker. When the turn cannot be described, the session's
 * record stands.
 */
export async function readSession(
  client: Client,
  caller: Caller,
  sessionId: string,
  states?: TurnStates,
): Promise<Static<typeof SessionView>> {
  await describeVisibleSession(client, caller, sessionId);
  const state = await client.connection.withDeadline(Date.now() + queryDeadlineMs, () =>
    client.workflow.getHandle(sessionWorkflowId(sessionId)).query(sessionStateQuery),
  );
  const turns = state.turns.map(turnOf);
  const active = turns.find((turn) => turn.id === state.activeTurnId);
  if (active) {
    const view = await client.workflow
      .getHandle(active.id)
      .describe()
      .then((description) => viewOf(client, active.id, description, states))
      .catch(() => undefined);
    if (view) Object.assign(active, { status: view.status, reason: view.reason });
  }
  // Sessions of code before the bound have no count: their turns are all there.
  const turnCount = state.turnCount ?? state.turns.length;
  return {
    id: state.sessionId,
    userId: state.userId,
    createdAt: state.createdAt,
    activeTurnId: state.activeTurnId ?? null,
    turnCount,
    turns,
  };
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
    ...(record.truncated ? { truncated: true } : {}),
  };
}

/** Open sessions, newest first: the caller's own, or for operators everyone's (or one user's). */
export async function listSessions(
  client: Client,
  cursors: PageCursors,
  caller: Caller,
  filter: { user?: string; limit?: number; cursor?: string },
) {
  const user = caller.operator ? filter.user : caller.id;
  const query = [
    workflowTypeClause('session'),
    `ExecutionStatus = 'Running'`,
    ...(user ? [`SkillflowUser = ${quoted(user)}`] : []),
  ].join(' AND ');
  const page = await listPage(client, cursors, query, filter.limit ?? 20, filter.cursor);
  const sessions: Static<typeof SessionSummary>[] = page.executions.map((execution) => ({
    id: execution.workflowId.slice('session-'.length),
    userId: execution.attributes.get(searchAttributes.user) ?? '',
    createdAt: execution.startTime.toISOString(),
  }));
  return { sessions, nextCursor: page.nextCursor };
}

/**
 * Cancels the session's running or waiting turn and waits (briefly) for it to end, then deletes the session's
 * workflows from Temporal: the session first (which terminates it: from then on its turns read as 404, see
 * describeVisibleTurn), then every turn and every earlier run. Temporal removes closed executions in the background,
 * within about a minute.
 */
export async function deleteSession(client: Client, caller: Caller, sessionId: string): Promise<void> {
  await describeVisibleSession(client, caller, sessionId);
  const sessionHandle = client.workflow.getHandle(sessionWorkflowId(sessionId));
  const state = await client.connection
    .withDeadline(Date.now() + queryDeadlineMs, () => sessionHandle.query(sessionStateQuery))
    .catch(() => undefined);
  if (state?.activeTurnId) await cancelAndAwait(client, state.activeTurnId, cancelWaitMs);
  const listed = await listAll(client, `SkillflowSession = ${quoted(sessionId)}`);

  const namespace = client.options.namespace;
  const remove = (workflowId: string, runId?: string) =>
    client.workflowService
      .deleteWorkflowExecution({ namespace, workflowExecution: { workflowId, runId } })
      .catch((err: { code?: number }) => {
        if (err.code !== 5) throw err;
      });
  await remove(sessionWorkflowId(sessionId));
  const runs = new Map<string, { workflowId: string; runId?: string }>();
  for (const turn of state?.turns ?? []) runs.set(turn.id, { workflowId: turn.id });
  for (const execution of listed)
    runs.set(`${execution.workflowId}/${execution.runId}`, {
      workflowId: execution.workflowId,
      runId: execution.runId,
    });
  await Promise.all([...runs.values()].map(({ workflowId, runId }) => remove(workflowId, runId)));
}

/** Asks the turn to cancel and waits until it has ended, or gives up after `timeoutMs` (deletion terminates it then). */
async function cancelAndAwait(client: Client, turnId: string, timeoutMs: number): Promise<void> {
  const handle = client.workflow.getHandle(turnId);
  await handle.cancel().catch(() => undefined);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = await handle.describe().then(
      (description) => description.status.name,
      () => 'GONE',
    );
    if (status !== 'RUNNING') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
