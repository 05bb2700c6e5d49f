/**
 * Knobs a turn runs with. They travel in the turn's input (set by whoever starts the session, from its validated
 * configuration), so a turn never reads the environment and replays with the values it started with.
 */
export interface TurnSettings {
  /** Model to call; absent uses the worker's SKILLFLOW_MODEL. */
  model?: string;
  maxTokens?: number;
  /** Attempts per model call, including the first. */
  modelMaxAttempts: number;
  /** One model call's time limit, in milliseconds. */
  modelTimeoutMs: number;
  /** Earlier exchanges carried into a new turn. */
  historyWindow: number;
}

export const defaultTurnSettings: TurnSettings = {
  modelMaxAttempts: 6,
  modelTimeoutMs: 600_000,
  historyWindow: 10,
};
