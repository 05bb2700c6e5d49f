import { proxySinks, type Sinks } from '@temporalio/workflow';
import type { TurnEvent } from '../core/events';
import type { TurnState } from '../core/turn';

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
     * state for reads. Sinks run when the activation completes on the worker, just before Temporal has the task: a
     * task that then fails is run again and writes the same offsets (streams drop what they already have), and one
     * whose push is lost leaves a gap in the offsets (streams then read the log).
     */
    eventLogged(turnId: string, event: TurnEvent, state: TurnState): void;
  };
}

export const { live: liveSink } = proxySinks<TurnSinks>();
