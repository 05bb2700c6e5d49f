import type { Client } from '@temporalio/client';
import type { TurnStatus } from '../core/turn';
import { searchAttributes } from '../workflows/search-attributes';
import type { Caller } from './caller';
import type { PageCursors } from './cursors';
import type { TurnListQuery, TurnSummary } from '../core/protocol';
import { endingOfClosedWorkflow } from './turn-closure';
import { sessionIdOfTurn } from './turn-view';
import { workflowTypeClause } from '../workflows/definitions';
import { listPage, quoted, type ListedExecution } from './visibility';

/**
 * A status filter in visibility terms. SkillflowStatus is what the turn last recorded; a turn Temporal closed by
 * itself (terminated, timed out, cancelled before it ran) never recorded its end, so the execution status decides.
 */
const statusClauses: Record<TurnStatus, string> = {
  running: `SkillflowStatus = 'running' AND ExecutionStatus = 'Running'`,
  waiting: `SkillflowStatus = 'waiting' AND ExecutionStatus = 'Running'`,
  completed: `SkillflowStatus = 'completed' AND ExecutionStatus = 'Completed'`,
  failed: `((SkillflowStatus = 'failed' AND ExecutionStatus = 'Completed') OR ExecutionStatus IN ('Terminated', 'TimedOut', 'Failed'))`,
  cancelled: `((SkillflowStatus = 'cancelled' AND ExecutionStatus = 'Completed') OR ExecutionStatus = 'Canceled')`,
};

/**
 * The caller's turns, or for operators everyone's (the inbox: `status=waiting`), from Temporal visibility. Order is
 * visibility's: turns still open first, newest first, then ended ones, most recently ended first.
 */
export async function listTurns(
  client: Client,
  cursors: PageCursors,
  caller: Caller,
  filter: TurnListQuery,
): Promise<{ turns: TurnSummary[]; nextCursor: string | null }> {
  const user = caller.operator ? filter.user : caller.id;
  const clauses = [workflowTypeClause('turn')];
  if (user) clauses.push(`SkillflowUser = ${quoted(user)}`);
  if (filter.session) clauses.push(`SkillflowSession = ${quoted(filter.session)}`);
  if (filter.skill) clauses.push(`SkillflowSkill = ${quoted(filter.skill)}`);
  if (filter.status) clauses.push(statusClauses[filter.status]);
  const page = await listPage(client, cursors, clauses.join(' AND '), filter.limit ?? 20, filter.cursor);
  return { turns: page.executions.map(summaryOf), nextCursor: page.nextCursor };
}

function summaryOf(execution: ListedExecution): TurnSummary {
  const attribute = (key: (typeof searchAttributes)[keyof typeof searchAttributes]) =>
    (execution.attributes.get(key) as string | undefined) ?? null;
  const recorded = (attribute(searchAttributes.status) ?? 'running') as TurnStatus;
  const status =
    execution.status === 'RUNNING' || execution.status === 'COMPLETED'
      ? recorded
      : endingOfClosedWorkflow(execution.status).status;
  return {
    id: execution.workflowId,
    sessionId: attribute(searchAttributes.session) ?? sessionIdOfTurn(execution.workflowId),
    userId: attribute(searchAttributes.user) ?? '',
    status,
    skill: attribute(searchAttributes.skill),
    step: attribute(searchAttributes.step),
    checkpoint: status === 'waiting' ? attribute(searchAttributes.checkpoint) : null,
    createdAt: execution.startTime.toISOString(),
    updatedAt: (execution.closeTime ?? execution.startTime).toISOString(),
  };
}
