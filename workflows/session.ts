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
  log,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { readPlanCarry } from '../core/policy';
import { boundedRecords, defaultHistoryWindowBytes, historyWindow } from '../core/session-records';
import { closedTurnEnding } from '../core/run/skill-result';
import { turnResultOfFailure, turnWorkflowId, type PlanCarry, type TurnResult } from '../core/turn';
import { closeSessionUpdate, sessionStateQuery, startTurnUpdate, turnEndedSignal, workflowTypes } from './definitions';
import { searchAttributes } from './search-attributes';
import { SessionErrorType, type SessionInput, type SessionState, type TurnRecord } from './session-types';
import { publicError } from './internal-errors';
import type { turnWorkflow } from './turn';

const activeTurnGraceMs = 2_000;

/**
 * A session lives as long as its user keeps it: it hands out turn numbers, runs one turn at a time, and keeps the
 * user/assistant text of its recent turns (a bounded tail, core/session-records.ts: the state crosses continue-as-new
 * whole); older turns are read from their own workflows.
 */
export async function sessionWorkflow(input: SessionInput): Promise<SessionState> {
  const state: SessionState = {
    sessionId: input.sessionId,
    userId: input.userId,
    createdAt: input.createdAt,
    closed: false,
    turnCount: input.turnCount ?? input.turns?.length ?? 0,
    turns: input.turns ?? [],
  };
  setHandler(sessionStateQuery, () => state);

  // A legacy session crossing into this type continues as new with the carry of version 3 it holds.
  let plan: PlanCarry | undefined = readPlanCarry(input.plan);
  const recordEnd = (
    record: TurnRecord,
    result: Pick<TurnResult, 'status' | 'reason' | 'output' | 'error'> & { plan?: PlanCarry },
  ) => {
    if (record.endedAt) return;
    const { plan: carried, ...ending } = result;
    if ('turnId' in result) plan = readPlanCarry(carried);
    Object.assign(record, pickEnding(ending), { endedAt: new Date().toISOString() });
    if (state.activeTurnId === record.id) state.activeTurnId = undefined;
    if (!state.activeTurnId) state.turns = boundedRecords(state.turns);
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
      const child = await startChild<typeof turnWorkflow>(workflowTypes.turn, {
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
            history: historyWindow(
              state.turns.slice(0, -1),
              input.settings.historyWindow,
              input.settings.historyWindowBytes ?? defaultHistoryWindowBytes,
            ),
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

  await condition(
    () => state.closed || (workflowInfo().continueAsNewSuggested && !state.activeTurnId && allHandlersFinished()),
  );
  if (state.closed) {
    await condition(allHandlersFinished);
    return state;
  }
  const turns = boundedRecords(state.turns);
  return await continueAsNew<typeof sessionWorkflow>({ ...input, turns, turnCount: state.turnCount, plan });
}

function childFailureResult(err: unknown): TurnResult | Pick<TurnResult, 'status' | 'reason' | 'error'> {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (isCancellation(err) || isCancellation(cause)) return closedTurnEnding({ kind: 'cancelled' });
  // A turn that ended `failed` fails its workflow with its result (which it also signalled before).
  const failed =
    cause instanceof ApplicationFailure
      ? turnResultOfFailure(cause.type ?? undefined, cause.details ?? undefined)
      : undefined;
  if (failed) return failed;
  if (cause instanceof TerminatedFailure) return closedTurnEnding({ kind: 'terminated' });
  if (cause instanceof TimeoutFailure) return closedTurnEnding({ kind: 'timed_out' });
  return closedTurnEnding({ kind: 'failed', message: publicError(cause, 'A turn').message });
}

function pickEnding(
  result: Pick<TurnResult, 'status' | 'reason' | 'output' | 'error'>,
): Pick<TurnRecord, 'status' | 'reason' | 'output' | 'error'> {
  return { status: result.status, reason: result.reason, output: result.output, error: result.error };
}
