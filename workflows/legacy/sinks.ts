import { proxySinks, type Sinks } from '@temporalio/workflow';
import type { TurnEvent } from './core/events';
import type { TurnState } from './core/turn';

/**
 * Calls out of the workflow that the worker carries out and replays skip: they may not change what the workflow
 * does, only tell the outside world something happened.
 */
export interface TurnSinks extends Sinks {
  live: {
    /**
     * The turn's durable log grew to `offset`: streams following it can read it now. Workflow code no longer calls it;
     * histories and bundles of older code still do, so workers keep it.
     */
    logAppended(turnId: string, offset: number): void;
    /**
     * The turn wrote `event` to its log, leaving its state as `state`: pushed to streams, and kept as the turn's latest
     * state for reads. Sinks run when the activation ends on the worker, before Temporal has recorded the task, and
     * also when it failed: the event is not durable yet. A task that is not recorded runs again, and may write other
     * events at the same offsets when new history arrived meanwhile; streams confirm a pushed ending before they end
     * and re-read the log when a push differs from what they have (api/streams/turn-feed.ts). A lost push leaves a gap
     * in the offsets (streams then read the log).
     */
    eventLogged(turnId: string, event: TurnEvent, state: TurnState): void;
  };
}

export const { live: liveSink } = proxySinks<TurnSinks>();
