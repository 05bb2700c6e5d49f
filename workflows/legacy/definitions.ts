import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CheckpointAction, CheckpointDecision } from './core/checkpoints';
import type { TurnEvent } from './core/events';
import type { SkillProgress, SkillRunInput, SkillRunResult } from './core/skill-runs';
import type { TurnResult, TurnState } from './core/turn';
import type { SessionState, StartTurnRequest, StartTurnResponse } from './session-types';

/** Every workflow type, signal, query and update, defined once: workflows, the API and tests all import these. */

/** This frozen code's workflow types: the legacy names (workflows/index.ts registers it under them). */
export { legacyWorkflowTypes as workflowTypes } from '../definitions';
/** How an operator moves a legacy run to the current code (the boundary's own signal, defined with the current code). */
export { moveToCurrentSignal } from '../definitions';

/** The skill run workflow's signature, to start it by its type name. */
export type SkillRunWorkflow = (input: SkillRunInput) => Promise<SkillRunResult>;

/** Turns and skill runs both answer these: state and event log. */
export const turnStateQuery = defineQuery<TurnState>('turnState');
/** The log after `afterOffset`, at most `limit` events (a page); workflows of older code ignore `limit` and answer all. */
export const turnEventsQuery = defineQuery<TurnEvent[], [afterOffset: number, limit?: number]>('turnEvents');

export const sessionStateQuery = defineQuery<SessionState>('sessionState');
export const startTurnUpdate = defineUpdate<StartTurnResponse, [StartTurnRequest]>('startTurn');
export const closeSessionUpdate = defineUpdate<void, [{ by: string }]>('closeSession');

/** A human's decision on a pending checkpoint. The signal is what operators send from the UI or CLI (invalid ones are
 * logged and ignored); the update is what the API uses, so a rejected decision gets its reason back atomically. */
export const checkpointDecisionSignal = defineSignal<[CheckpointDecision]>('checkpointDecision');
export const answerCheckpointUpdate = defineUpdate<
  { checkpointId: string; action: CheckpointAction },
  [CheckpointDecision]
>('answerCheckpoint');

/** A skill run tells the run that invoked it what it did (events, a checkpoint it waits at, usage, records): in order. */
export const skillProgressSignal = defineSignal<[SkillProgress]>('skillProgress');

/** A turn tells its session how it ended before it closes, so the session is free for the next message at once. */
export const turnEndedSignal = defineSignal<[TurnResult]>('turnEnded');
