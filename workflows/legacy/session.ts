import {
  ApplicationFailure,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  patched,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { migratePlanCarry, workflowPatches } from './core/policy';
import { boundedRecords, defaultHistoryWindowBytes, historyWindow } from './core/session-records';
import { turnResultOfFailure, turnWorkflowId, type Exchange, type PlanCarry, type TurnResult } from './core/turn';
import { workflowTypes as currentWorkflowTypes } from '../definitions';
import {
  closeSessionUpdate,
  moveToCurrentSignal,
  sessionStateQuery,
  startTurnUpdate,
  turnEndedSignal,
} from './definitions';
import { searchAttributes } from './search-attributes';
import { SessionErrorType, type SessionInput, type SessionState, type TurnRecord } from './session-types';
import { publicError } from './internal-errors';
import { movePatch } from './move';
import { patchesOfThisRun } from './run-rules';
import { turnWorkflow } from './turn';

const activeTurnGraceMs = 2_000;

/**
 * A session lives as long as its user keeps it: it hands out turn numbers, runs one turn at a time, and keeps the
 * user/assistant text of its recent turns (a bounded tail, core/session-records.ts: the state crosses continue-as-new
 * whole); older turns are read from their own workflows.
 */
export async function sessionWorkflow(input: SessionInput): Promise<SessionState> {
  // Runs started before the bound keep every record and the count-only window until they continue as new.
  const bounded = patchesOfThisRun()(workflowPatches.boundedSession);
  const state: SessionState = {
    sessionId: input.sessionId,
    userId: input.userId,
    createdAt: input.createdAt,
    closed: false,
    turnCount: input.turnCount ?? input.turns?.length ?? 0,
    turns: input.turns ?? [],
  };
  setHandler(sessionStateQuery, () => state);

  // Carries are read in any shape skillflow wrote (a run continued as new, or a turn of older code, may hold an old one).
  let plan: PlanCarry | undefined = migratePlanCarry(input.plan);
  const recordEnd = (
    record: TurnRecord,
    result: Pick<TurnResult, 'status' | 'reason' | 'output' | 'error'> & { plan?: PlanCarry },
  ) => {
    if (record.endedAt) return;
    const { plan: carried, ...ending } = result;
    if ('turnId' in result) plan = migratePlanCarry(carried);
    Object.assign(record, pickEnding(ending), { endedAt: new Date().toISOString() });
    if (state.activeTurnId === record.id) state.activeTurnId = undefined;
    if (bounded && !state.activeTurnId) state.turns = boundedRecords(state.turns);
  };

  const cancelActiveTurn = async () => {
    const active = state.activeTurnId;
    if (!active) return;
    try {
      await getExternalWorkflowHandle(active).cancel();
    } catch (err) {
      // The turn closed before the cancel reached it; its ending is on its way to this session.
      log.info('The turn to cancel had already closed', {
        turnId: active,
        error: err instanceof Error ? err.message : String(err),
      });
    }
    await condition(() => state.activeTurnId !== active);
  };

  /**
   * A turn tells the session it ended before a client can see it end, but that signal and the client's next message
   * may reach the session in one activation: give a finishing turn a moment before refusing.
   */
  const waitForActiveTurnToEnd = async () => {
    if (await condition(() => !state.activeTurnId, activeTurnGraceMs)) return;
    throw ApplicationFailure.nonRetryable(
      `Turn ${state.activeTurnId} is still running or waiting. Wait for it, cancel it, or send {"supersede": true}.`,
      SessionErrorType.turnInProgress,
      { turnId: state.activeTurnId },
    );
  };

  setHandler(
    startTurnUpdate,
    async (request) => {
      // Checked again after every wait, with nothing awaited between the check and the reservation below.
      for (;;) {
        // A retry under an Idempotency-Key that this session (or a run of it before continue-as-new) already took.
        const known =
          request.idempotency && state.turns.find((turn) => turn.idempotency?.key === request.idempotency!.key);
        if (known) return { turnId: known.id, number: known.number, idempotency: known.idempotency };
        if (!state.activeTurnId) break;
        if (request.supersede) await cancelActiveTurn();
        else await waitForActiveTurnToEnd();
      }
      const number = ++state.turnCount;
      const turnId = turnWorkflowId(state.sessionId, number);
      const createdAt = new Date().toISOString();
      const record: TurnRecord = {
        id: turnId,
        number,
        message: request.message,
        skill: request.skill,
        status: 'running',
        createdAt,
        ...(request.idempotency ? { idempotency: request.idempotency } : {}),
      };
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
            ...(request.skill && request.params ? { params: request.params } : {}),
            history: bounded
              ? historyWindow(
                  state.turns.slice(0, -1),
                  input.settings.historyWindow,
                  input.settings.historyWindowBytes ?? defaultHistoryWindowBytes,
                )
              : recentExchanges(state.turns.slice(0, -1), input.settings.historyWindow),
            createdAt,
            settings: input.settings,
            ...(plan ? { resume: plan } : {}),
            ...(request.requestId ? { requestId: request.requestId } : {}),
            ...(request.tokenBudget !== undefined ? { tokenBudget: request.tokenBudget } : {}),
          },
        ],
      });
      child.result().then(
        (result) => recordEnd(record, result),
        (err) => recordEnd(record, childFailureResult(err)),
      );
      return { turnId, number, ...(request.idempotency ? { idempotency: request.idempotency } : {}) };
    },
    {
      validator: (request) => {
        if (state.closed)
          throw ApplicationFailure.nonRetryable('The session is closed.', SessionErrorType.sessionClosed);
        if (typeof request?.message !== 'string' || request.message.trim() === '') {
          throw ApplicationFailure.nonRetryable('message must be a non-empty string.', 'InvalidRequest');
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

  // The version boundary: an operator's move makes the session continue as new as soon as it has no active turn. A
  // signal a worker without this handler received (and ignored) has no marker in its history: replayed, it does nothing.
  let moveRequested = false;
  setHandler(moveToCurrentSignal, () => {
    if (patched(movePatch)) moveRequested = true;
  });

  await condition(
    () =>
      state.closed ||
      ((workflowInfo().continueAsNewSuggested || moveRequested) && !state.activeTurnId && allHandlersFinished()),
  );
  if (state.closed) {
    await condition(allHandlersFinished);
    return state;
  }
  const turns = bounded ? boundedRecords(state.turns) : state.turns;
  // The version boundary: a legacy session continues as new into the current session type, with its carry of
  // version 3 (migratePlanCarry read it so). The last command of a run: no history in flight holds it yet.
  const crossToCurrent = makeContinueAsNewFunc<typeof sessionWorkflow>({ workflowType: currentWorkflowTypes.session });
  return await crossToCurrent({ ...input, turns, turnCount: state.turnCount, plan });
}

/** The window of code before the byte bound: by count only (session runs started before it, replayed). */
export function recentExchanges(turns: TurnRecord[], window: number): Exchange[] {
  if (window <= 0) return [];
  return turns
    .filter((turn) => turn.status === 'completed' || turn.output)
    .slice(-window)
    .map((turn) => ({ user: turn.message, assistant: turn.output ?? '' }));
}

function childFailureResult(err: unknown): TurnResult | Pick<TurnResult, 'status' | 'reason' | 'error'> {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (isCancellation(err) || isCancellation(cause)) return { status: 'cancelled', reason: 'cancelled' };
  // A turn that ended `failed` fails its workflow with its result (which it also signalled before).
  const failed =
    cause instanceof ApplicationFailure
      ? turnResultOfFailure(cause.type ?? undefined, cause.details ?? undefined)
      : undefined;
  if (failed) return failed;
  if (cause instanceof TerminatedFailure) {
    return {
      status: 'failed',
      reason: 'terminated',
      error: { code: 'terminated', message: 'The turn was terminated in Temporal.' },
    };
  }
  if (cause instanceof TimeoutFailure) {
    return {
      status: 'failed',
      reason: 'timed_out',
      error: { code: 'timed_out', message: 'The turn timed out in Temporal.' },
    };
  }
  return {
    status: 'failed',
    reason: 'workflow_failed',
    error: { code: 'workflow_failed', message: publicError(cause, 'A turn').message },
  };
}

function pickEnding(
  result: Pick<TurnResult, 'status' | 'reason' | 'output' | 'error'>,
): Pick<TurnRecord, 'status' | 'reason' | 'output' | 'error'> {
  return { status: result.status, reason: result.reason, output: result.output, error: result.error };
}
