import {
  ApplicationFailure,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { turnWorkflowId, type Exchange, type PlanCarry, type TurnResult } from '../core/turn';
import { closeSessionUpdate, sessionStateQuery, startTurnUpdate, turnEndedSignal } from './definitions';
import { searchAttributes } from './search-attributes';
import { SessionErrorType, type SessionInput, type SessionState, type TurnRecord } from './session-types';
import { turnWorkflow } from './turn';

/**
 * A session lives as long as its user keeps it: it hands out turn numbers, runs one turn at a time, and keeps the
 * user/assistant text of every turn after Temporal's retention has removed the turns themselves.
 */
export async function sessionWorkflow(input: SessionInput): Promise<SessionState> {
  const state: SessionState = {
    sessionId: input.sessionId,
    userId: input.userId,
    createdAt: input.createdAt,
    closed: false,
    turns: input.turns ?? [],
  };
  setHandler(sessionStateQuery, () => state);

  let plan: PlanCarry | undefined = input.plan;
  const recordEnd = (record: TurnRecord, result: Pick<TurnResult, 'status' | 'reason' | 'output' | 'error'> & { plan?: PlanCarry }) => {
    if (record.endedAt) return;
    const { plan: carried, ...ending } = result;
    if ('turnId' in result) plan = carried;
    Object.assign(record, pickEnding(ending), { endedAt: new Date().toISOString() });
    if (state.activeTurnId === record.id) state.activeTurnId = undefined;
  };

  const cancelActiveTurn = async () => {
    const active = state.activeTurnId;
    if (!active) return;
    await getExternalWorkflowHandle(active).cancel();
    await condition(() => state.activeTurnId !== active);
  };

  setHandler(
    startTurnUpdate,
    async (request) => {
      if (request.supersede) await cancelActiveTurn();
      const number = state.turns.length + 1;
      const turnId = turnWorkflowId(state.sessionId, number);
      const createdAt = new Date().toISOString();
      const record: TurnRecord = { id: turnId, number, message: request.message, skill: request.skill, status: 'running', createdAt };
      state.turns.push(record);
      state.activeTurnId = turnId;
      const child = await startChild(turnWorkflow, {
        workflowId: turnId,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: [
          { key: searchAttributes.session, value: state.sessionId },
          { key: searchAttributes.user, value: state.userId },
          { key: searchAttributes.status, value: 'running' },
        ],
        args: [
          {
            turnId,
            sessionId: state.sessionId,
            userId: state.userId,
            message: request.message,
            skill: request.skill,
            history: recentExchanges(state.turns.slice(0, -1), input.settings.historyWindow),
            createdAt,
            settings: input.settings,
            ...(plan ? { resume: plan } : {}),
          },
        ],
      });
      child.result().then(
        (result) => recordEnd(record, result),
        (err) => recordEnd(record, childFailureResult(err)),
      );
      return { turnId, number };
    },
    {
      validator: (request) => {
        if (state.closed) throw ApplicationFailure.nonRetryable('The session is closed.', SessionErrorType.sessionClosed);
        if (typeof request?.message !== 'string' || request.message.trim() === '') {
          throw ApplicationFailure.nonRetryable('message must be a non-empty string.', 'InvalidRequest');
        }
        if (state.activeTurnId && !request.supersede) {
          throw ApplicationFailure.nonRetryable(
            `Turn ${state.activeTurnId} is still running or waiting. Wait for it, cancel it, or send {"supersede": true}.`,
            SessionErrorType.turnInProgress,
            { turnId: state.activeTurnId },
          );
        }
      },
    },
  );

  setHandler(turnEndedSignal, (result) => {
    const record = state.turns.find((turn) => turn.id === result.turnId);
    if (record) recordEnd(record, result);
  });

  setHandler(closeSessionUpdate, async () => {
    state.closed = true;
    await cancelActiveTurn();
  });

  await condition(
    () => state.closed || (workflowInfo().continueAsNewSuggested && !state.activeTurnId && allHandlersFinished()),
  );
  if (state.closed) {
    await condition(allHandlersFinished);
    return state;
  }
  return await continueAsNew<typeof sessionWorkflow>({ ...input, turns: state.turns, plan });
}

export function recentExchanges(turns: TurnRecord[], window: number): Exchange[] {
  if (window <= 0) return [];
  return turns
    .filter((turn) => turn.status === 'completed' || turn.output)
    .slice(-window)
    .map((turn) => ({ user: turn.message, assistant: turn.output ?? '' }));
}

function childFailureResult(err: unknown): Pick<TurnResult, 'status' | 'reason' | 'error'> {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (isCancellation(err) || isCancellation(cause)) return { status: 'cancelled', reason: 'cancelled' };
  if (cause instanceof TerminatedFailure) {
    return { status: 'failed', reason: 'terminated', error: { code: 'terminated', message: 'The turn was terminated in Temporal.' } };
  }
  if (cause instanceof TimeoutFailure) {
    return { status: 'failed', reason: 'timed_out', error: { code: 'timed_out', message: 'The turn timed out in Temporal.' } };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return { status: 'failed', reason: 'workflow_failed', error: { code: 'workflow_failed', message } };
}

function pickEnding(result: Pick<TurnResult, 'status' | 'reason' | 'output' | 'error'>): Pick<TurnRecord, 'status' | 'reason' | 'output' | 'error'> {
  return { status: result.status, reason: result.reason, output: result.output, error: result.error };
}
