import { proxySinks, type Sinks } from '@temporalio/workflow';

/**
 * Calls out of the workflow that the worker carries out and replays skip: they may not change what the workflow
 * does, only tell the outside world something happened.
 */
export interface TurnSinks extends Sinks {
  live: {
    /** The turn's durable log grew to `offset`: streams following it can read it now. */
    logAppended(turnId: string, offset: number): void;
  };
}

export const { live: liveSink } = proxySinks<TurnSinks>();
