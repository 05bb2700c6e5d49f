import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { TurnEvent } from '../core/events';
import type { TurnState } from '../core/turn';
import type { SessionState, StartTurnRequest, StartTurnResponse } from './session-types';

/** Every signal, query and update, defined once: workflows, the API and tests all import these. */

export const turnStateQuery = defineQuery<TurnState>('turnState');
export const turnEventsQuery = defineQuery<TurnEvent[], [afterOffset: number]>('turnEvents');

export const sessionStateQuery = defineQuery<SessionState>('sessionState');
export const startTurnUpdate = defineUpdate<StartTurnResponse, [StartTurnRequest]>('startTurn');
export const closeSessionUpdate = defineUpdate<void, [{ by: string }]>('closeSession');
